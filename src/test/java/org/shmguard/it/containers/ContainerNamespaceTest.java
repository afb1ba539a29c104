package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;

/**
 * A "container": a child in its own PID and mount namespace with its own 16 MB tmpfs at
 * /dev/shm, which the sandbox cannot see at any path of its own. shmguard must find it through
 * that namespace's mountinfo and reach it through /proc/PID/root/dev/shm.
 */
class ContainerNamespaceTest {

  @Test
  void segmentsInsideAContainerAreFoundThroughItsNamespaceWithTheRightVerdicts() throws Exception {
    try (Holder container = Holder.startInContainer("size=16m,mode=1777", "create-map:9637892", "/dev/shm/nccl-InCtr1")) {
      Path containerShm = Path.of("/proc", Integer.toString(container.pid()), "root", "dev", "shm");
      Path leaked = containerShm.resolve("nccl-Leak01");
      Files.write(leaked, new byte[4100]);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");

      JsonNode scan = CliRun.of("scan", "--json", "-c", config.toString()).json();

      JsonNode mount = null;
      for (JsonNode m : scan.get("mounts")) {
        if (m.get("origin").asText().equals("namespace")) {
          mount = m;
        }
      }
      assertThat(mount).as("the container's /dev/shm among %s", scan.get("mounts")).isNotNull();
      // Reached through any process of the container's mount namespace (unshare itself is one).
      assertThat(mount.get("path").asText()).matches("/proc/[0-9]+/root/dev/shm");
      assertThat(mount.get("mountPoint").asText()).isEqualTo("/dev/shm");
      assertThat(mount.get("sizeBytes").asLong()).isEqualTo(16L << 20);
      assertThat(CliRun.verdictOf(scan, "nccl-InCtr1")).isEqualTo("held");
      assertThat(CliRun.holderPids(scan, "nccl-InCtr1")).containsExactly(container.pid());
      assertThat(CliRun.verdictOf(scan, "nccl-Leak01")).isEqualTo("leaked");

      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leaked).doesNotExist();
      assertThat(containerShm.resolve("nccl-InCtr1")).exists();
    }
  }
}
