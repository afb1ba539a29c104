package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which hooks directories podman and CRI-O read, as their configuration files resolve them, on a fixture host. */
class HookDirsTest {
  @TempDir Path root;

  @Test
  void unsetEverywhereBothReadOnlyTheBuiltInDirectory() {
    HostFixture host = new HostFixture(root).file("/usr/bin/podman", "").file("/usr/bin/crio", "")
        .file("/usr/share/containers/containers.conf", "[engine]\n#hooks_dir = [\"/etc/containers/oci/hooks.d\"]\n");

    assertThat(HookDirs.installed(host.paths())).satisfiesExactly(
        podman -> {
          assertThat(podman.name()).isEqualTo("podman");
          assertThat(podman.dirs()).containsExactly(HookDirs.BUILT_IN);
          assertThat(podman.source()).contains("built-in default").contains("/usr/share/containers/containers.conf");
        },
        crio -> {
          assertThat(crio.name()).isEqualTo("CRI-O");
          assertThat(crio.dirs()).containsExactly(HookDirs.BUILT_IN);
          assertThat(crio.source()).contains("any configuration file");
        });
  }

  @Test
  void theLastSettingWinsAndASeveralLineArrayIsRead() {
    HostFixture host = new HostFixture(root).file("/usr/bin/podman", "")
        .file("/usr/share/containers/containers.conf", "[engine]\nhooks_dir = [\"/usr/share/containers/oci/hooks.d\"]\n")
        .file("/etc/containers/containers.conf", "[network]\nhooks_dir = [\"/not/this/table\"]\n")
        .file("/etc/containers/containers.conf.d/10-hooks.conf", "# a drop-in\n[engine]\nhooks_dir = [\n"
            + "  \"/usr/share/containers/oci/hooks.d\",  # the default\n  '/etc/containers/oci/hooks.d',\n]\n");

    HookDirs.Runtime podman = HookDirs.installed(host.paths()).get(0);

    assertThat(podman.dirs()).containsExactly(HookDirs.BUILT_IN, HookDirs.ETC);
    assertThat(podman.source()).isEqualTo("/etc/containers/containers.conf.d/10-hooks.conf:3");
  }

  @Test
  void noRuntimeProgramNoRuntime() {
    assertThat(HookDirs.installed(new HostFixture(root).paths())).isEmpty();
  }
}
