package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Reaching each tmpfs through a path that really leads to it, whatever covers what. */
class DiscoveryReachTest {

  private static JsonNode mountWithDev(JsonNode scan, String dev) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.get("dev").asText().equals(dev)) {
        return m;
      }
    }
    throw new AssertionError("no mount with device " + dev + " in " + scan.get("mounts") + "; warnings " + scan.get("pass"));
  }

  @Test
  void aContainerTmpfsWhoseShortestHostPathIsCoveredIsReachedThroughAnother() throws Exception {
    try (TmpfsMount shared = TmpfsMount.create("size=4m,mode=1777")) {
      String sharedDev = shared.dev().toString();
      // Docker-like: the container's /dev/shm is a tmpfs the runtime also mounted on the host...
      Path longer = Files.createDirectories(Sandbox.MOUNTS.resolve("runtime/containers/abc/mounts/shm"));
      Cmd.run("mount", "--bind", shared.path().toString(), longer.toString());
      Process container = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sh", "-c",
          "mount --bind \"$1\" /dev/shm && echo ready && exec sleep 600", "sh", shared.path().toString())
          .redirectErrorStream(true).start();
      TmpfsMount cover = null;
      try {
        assertThat(new String(container.getInputStream().readNBytes(6))).isEqualTo("ready\n");
        // ...and its shortest host mount point is then covered by another mount.
        cover = TmpfsMount.createAt(shared.path(), "size=1m");
        Files.write(longer.resolve("nccl-Cover1"), new byte[4100]);

        JsonNode scan = org.shmguard.testing.CliRun.scanJson(TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"));

        JsonNode m = mountWithDev(scan, sharedDev);
        assertThat(m.get("path").asText()).isEqualTo(longer.toString());
        assertThat(CliRun.verdictOf(scan, "nccl-Cover1")).isEqualTo("grace");
      } finally {
        if (cover != null) {
          cover.close();
        }
        container.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Cmd.exec("umount", longer.toString());
      }
    }
  }

  @Test
  void withHostRootTheHostsViewIsPid1sNotTheContainersOwn() throws Exception {
    Sandbox.require();
    Path hostRoot = Files.createDirectories(Sandbox.MOUNTS.resolve("hostroot-" + ProcessHandle.current().pid()));
    String hostShmDev = Cmd.run("stat", "-c", "%Hd:%Ld", "/dev/shm").strip();
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n");
    // A shmguard "container": its own mount namespace with its own 8 MB /dev/shm, the host's root at hostRoot.
    Cmd.Result r = Cmd.exec("unshare", "--mount", "--propagation", "private", "sh", "-c",
        "mount --rbind / \"$1\" && mount -t tmpfs -o size=8m own-shm /dev/shm && exec \"$2\" -cp \"$3\" org.shmguard.cli.Main scan --json"
            + " --host-root \"$1\" -c \"$4\"",
        "sh", hostRoot.toString(), Sandbox.javaBinary(), System.getProperty("java.class.path"), config.toString());
    try {
      assertThat(r.status()).as(r.err()).isZero();
      JsonNode scan = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
      JsonNode host = null;
      for (JsonNode m : scan.get("mounts")) {
        if (m.get("origin").asText().equals("host")) {
          host = m;
        }
      }
      assertThat(host).as("the host's /dev/shm in %s", scan).isNotNull();
      assertThat(host.get("dev").asText()).isEqualTo(hostShmDev);
      assertThat(host.get("path").asText()).startsWith(hostRoot.toString());
      assertThat(host.get("sizeBytes").asLong()).isNotEqualTo(8L << 20);
    } finally {
      Files.deleteIfExists(hostRoot);
    }
  }
}
