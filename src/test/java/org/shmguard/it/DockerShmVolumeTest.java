package org.shmguard.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Docker's layout on the host, made in the sandbox (no Docker runs here): a container's shm tmpfs
 * at {@code <data root>/containers/<id>/mounts/shm} and its {@code config.v2.json} beside it. The
 * mount is found and named "trainer" from the file root wrote; a file that is not root's alone, or
 * a link, names nothing.
 */
class DockerShmVolumeTest {
  private static final String ID = "38a2e70e827fb2fab72ba6da5bba5225389aed6e3137148d7c8e7ee0d69d3742";

  @Test
  void aContainersShmIsFoundAtItsDataRootAndNamedOnlyFromRootsOwnConfig() throws Exception {
    Path root = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "docker-");
    Path container = Files.createDirectories(root.resolve("containers").resolve(ID));
    Path shmDir = Files.createDirectories(container.resolve("mounts/shm"));
    Path configFile = container.resolve("config.v2.json");
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\nruntimes:\n  kubeletRoot: \"\"\n"
        + "  dockerRoot: " + root + "\n  containerStorage: []\n");
    try (TmpfsMount shm = TmpfsMount.createAt(shmDir, "size=1m")) {
      Files.writeString(configFile, "{\"StreamConfig\":{},\"State\":{\"Running\":false},\"ID\":\"" + ID
          + "\",\"Name\":\"/trainer\",\"Driver\":\"overlay2\"}");
      Files.setPosixFilePermissions(configFile, PosixFilePermissions.fromString("rw-------"));
      JsonNode m = PodVolumeTest.volumeIn(CliRun.scanJson(config), shmDir);
      assertThat(m.get("mountPoint").asText()).isEqualTo("/dev/shm");
      assertThat(m.get("container").asText()).isEqualTo("docker:" + ID.substring(0, 12));
      assertThat(m.get("workload").get("containerName").asText()).isEqualTo("trainer");
      assertThat(m.get("workload").get("containerId").asText()).isEqualTo(ID);

      Cmd.run("chown", "65534:65534", configFile.toString());
      assertThat(PodVolumeTest.volumeIn(CliRun.scanJson(config), shmDir).get("workload").has("containerName")).isFalse();

      Cmd.run("chown", "0:0", configFile.toString());
      Files.move(configFile, root.resolve("elsewhere.json"));
      Files.createSymbolicLink(configFile, root.resolve("elsewhere.json"));
      JsonNode linked = PodVolumeTest.volumeIn(CliRun.scanJson(config), shmDir).get("workload");
      assertThat(linked.has("containerName")).as("named through a link").isFalse();
      assertThat(linked.get("containerId").asText()).isEqualTo(ID);
    } finally {
      Cmd.run("rm", "-rf", root.toString());
    }
  }
}
