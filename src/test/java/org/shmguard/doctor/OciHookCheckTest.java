package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OciHookCheckTest {
  private static final String DEBIAN_CONF = "[engine]\n# Path to OCI hooks directories for automatically executed hooks.\n#\n"
      + "#hooks_dir = [\n#  \"/usr/share/containers/oci/hooks.d\",\n#]\n";

  @TempDir Path root;

  private HostFixture debian12Podman() {
    return new HostFixture(root).file("/usr/bin/podman", "").file("/usr/share/shmguard/oci-hook", "")
        .file(OciHookCheck.SHIPPED, "{\"version\":\"1.0.0\",\"hook\":{\"path\":\"/usr/share/shmguard/oci-hook\"},"
            + "\"when\":{\"always\":true},\"stages\":[\"createRuntime\"]}")
        .file("/usr/share/containers/containers.conf", DEBIAN_CONF);
  }

  private void link(String dir) throws Exception {
    Path d = Files.createDirectories(root.resolve(dir.substring(1)));
    Files.createSymbolicLink(d.resolve("shmguard-shm.json"), Path.of(OciHookCheck.SHIPPED));
  }

  @Test
  void hookLinkedIntoEtcIsPlainlyNotRunByDebiansPodman() throws Exception {
    HostFixture host = debian12Podman();
    link("/etc/containers/oci/hooks.d");

    Finding f = only(new OciHookCheck().run(host.context()), "oci-hook-unread");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).isEqualTo("the shmguard OCI hook is not run by podman: /etc/containers/oci/hooks.d/shmguard-shm.json -> "
        + OciHookCheck.SHIPPED + " is in a directory podman does not read, so no container's /dev/shm is sized at its start");
    assertThat(f.evidence()).containsExactly("podman reads hooks from /usr/share/containers/oci/hooks.d: its built-in default"
        + " (no hooks_dir in /usr/share/containers/containers.conf)");
    assertThat(f.fix().get(0)).isEqualTo("ln -s " + OciHookCheck.SHIPPED + " /usr/share/containers/oci/hooks.d/");
  }

  @Test
  void hookInTheDefaultDirectoryIsOn() throws Exception {
    HostFixture host = debian12Podman();
    link("/usr/share/containers/oci/hooks.d");

    Finding f = only(new OciHookCheck().run(host.context()), "oci-hook-on");

    assertThat(f.severity()).isEqualTo(Severity.INFO);
    assertThat(f.summary()).startsWith("the shmguard OCI hook is on for podman: /usr/share/containers/oci/hooks.d/shmguard-shm.json");
  }

  @Test
  void aHooksDirSettingInADropInDecidesAndTheLastOneWins() throws Exception {
    HostFixture host = debian12Podman()
        .file("/etc/containers/containers.conf", "[engine]\nhooks_dir = [\"/opt/hooks\"]\n")
        .file("/etc/containers/containers.conf.d/50-site.conf", "[containers]\nhooks_dir = [\"/not/engine\"]\n[engine]\nhooks_dir = [\n"
            + "  \"/usr/share/containers/oci/hooks.d\",  # vendor\n  \"/etc/containers/oci/hooks.d\",\n]\n");
    link("/etc/containers/oci/hooks.d");

    Finding f = only(new OciHookCheck().run(host.context()), "oci-hook-on");

    assertThat(f.evidence()).containsExactly("podman reads hooks from /usr/share/containers/oci/hooks.d, /etc/containers/oci/hooks.d:"
        + " /etc/containers/containers.conf.d/50-site.conf:4");
  }

  @Test
  void noHookAnywhereSaysItIsOffAndHowToTurnItOn() {
    HostFixture host = debian12Podman().file("/usr/bin/crio", "").file("/etc/crio/crio.conf", "[crio.runtime]\nhooks_dir = [\"/etc/containers/oci/hooks.d\"]\n");

    var found = new OciHookCheck().run(host.context());

    assertThat(found).extracting(Finding::id).containsExactly("oci-hook-off", "oci-hook-off");
    assertThat(found.get(0).summary()).isEqualTo("the shmguard OCI hook is off for podman: no shmguard hook in a directory it reads,"
        + " so GPU containers start with the /dev/shm they ask for");
    assertThat(found.get(1).subject()).isEqualTo("CRI-O");
    assertThat(found.get(1).fix().get(0)).startsWith("ln -s " + OciHookCheck.SHIPPED + " /etc/containers/oci/hooks.d/");
  }

  @Test
  void noRuntimeNoFinding() {
    assertThat(new OciHookCheck().run(new HostFixture(root).context())).isEmpty();
  }
}
