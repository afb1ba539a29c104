package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * shmguard laid out as the DaemonSet lays it out: in a "container" of its own (its own mount
 * namespace with its own /dev/shm) but in the node's PID namespace (hostPID), with the node's
 * /dev/shm mounted at /host/dev/shm. It must find the node's /dev/shm through the node's
 * processes and reap a leak there. The sandbox plays the node.
 */
class DaemonSetLayoutTest {
  @Test
  void containerizedShmguardReapsALeakInTheNodesShmThroughTheHostMount() throws Exception {
    Sandbox.require();
    Path leak = Path.of("/dev/shm/nccl-NodeLk1");
    Files.write(leak, new byte[4100]);
    Path hostShm = Files.createDirectories(Sandbox.MOUNTS.resolve("daemonset-host-dev-shm-" + ProcessHandle.current().pid()));
    Path config = TestConfig.write("reap:\n  grace: 0s\n  requireHostPidNamespace: false\n");
    try {
      Cmd.run("mount", "--bind", "/dev/shm", hostShm.toString());
      // The container: a new mount namespace whose /dev/shm is a tmpfs of its own (the node's is
      // unmounted first, as a container's root never had it), the node's reachable only at hostShm.
      String inContainer = "umount /dev/shm && mount -t tmpfs container-shm /dev/shm && exec \"$0\" -cp \"$1\" "
          + "org.shmguard.cli.Main clean --json -c \"$2\"";
      Cmd.Result r = Cmd.exec("unshare", "-m", "--propagation", "slave", "sh", "-c", inContainer,
          Sandbox.javaBinary(), System.getProperty("java.class.path"), config.toString());

      assertThat(r.status()).as(r.out() + r.err()).isZero();
      assertThat(r.out()).contains("nccl-NodeLk1").contains("\"reaped\"");
      assertThat(leak).doesNotExist();
    } finally {
      Cmd.exec("umount", hostShm.toString());
      Files.deleteIfExists(hostShm);
      Files.deleteIfExists(leak);
    }
  }
}
