package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.RuntimeRoots;

/** The runtimes section: where pods' and containers' shm tmpfs are looked for on the host. */
class RuntimesSectionTest {
  private static Config parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new java.io.StringReader(yaml), "test.yaml");
  }

  @Test
  void theDefaultsAreEachRuntimesOwnPaths() throws Exception {
    assertThat(parse("").runtimes()).isEqualTo(RuntimeRoots.DEFAULTS);
    assertThat(RuntimeRoots.DEFAULTS).isEqualTo(new RuntimeRoots("/var/lib/kubelet", "/var/log/pods", "/var/lib/docker",
        List.of("/var/lib/containers/storage", "/run/containers/storage")));
  }

  @Test
  void aKubeletRootDirElsewhereAndARuntimeLeftOut() throws Exception {
    RuntimeRoots r = parse("runtimes:\n  kubeletRoot: /data/kubelet\n  dockerRoot: \"\"\n  containerStorage: []\n").runtimes();
    assertThat(r.kubeletRoot()).isEqualTo("/data/kubelet");
    assertThat(r.podLogs()).isEqualTo("/var/log/pods");
    assertThat(r.dockerRoot()).isEmpty();
    assertThat(r.containerStorage()).isEmpty();
  }

  @Test
  void aRootThatIsNotAPlainAbsolutePathStopsTheStartWithItsLineAndKey() {
    assertThatThrownBy(() -> parse("runtimes:\n  kubeletRoot: var/lib/kubelet\n")).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.format()).startsWith("test.yaml:2: runtimes.kubeletRoot: ").contains("not an absolute path"));
    assertThatThrownBy(() -> parse("runtimes:\n  containerStorage: [/var/lib/containers/../storage]\n"))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.format()).contains("runtimes.containerStorage"));
  }
}
