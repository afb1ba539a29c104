package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.host.MountEntry;
import org.shmguard.nativ.Linux;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.UserNsAttacker;

/**
 * The daemon with remounting on, against an ordinary user's chroot whose "/dev/shm" is a small,
 * nearly full, read-only tmpfs: the remount is refused and said so in the journal, and neither
 * the host's /dev/shm (here, the sandbox's) nor the user's tmpfs changes.
 */
class UserNamespaceRemountTest {

  @Test
  void theDaemonRefusesToRemountAUserNamespacesTmpfsAndTheHostsDevShmKeepsItsOptionsAndSize() throws Exception {
    MountEntry hostBefore = hostShm();
    long hostSize = Linux.get().statvfs("/dev/shm").sizeBytes();
    try (Journald journald = Journald.start(); UserNsAttacker a = UserNsAttacker.chroot("size=1m,mode=1777,noexec")) {
      MountEntry atkBefore = a.shm();
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "userns-");
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
          + "capacity:\n  warn: 50\n  critical: 80\n  hysteresis: 10\n"
          + "advice:\n  socket: " + dir.resolve("advice.sock") + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "remount:\n  enabled: true\n  targetSize: 4M\n  maxSize: 16M\n  cooldown: 0s\n");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
      try {
        Eventually.until("a remount_refused entry for the user's tmpfs", Duration.ofSeconds(60),
            () -> !refusals().isEmpty());

        JsonNode e = refusals().get(0);
        assertThat(e.get("SHM_REASON").asText()).contains("user namespace");
        assertThat(Journald.entries("SHMGUARD_EVENT", "remount_grown")).isEmpty();
        assertThat(hostShm()).isEqualTo(hostBefore);
        assertThat(Linux.get().statvfs("/dev/shm").sizeBytes()).isEqualTo(hostSize);
        assertThat(a.shm()).isEqualTo(atkBefore);
        assertThat(a.file("nccl-Atk001")).exists();
      } finally {
        daemon.destroy();
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  private static List<JsonNode> refusals() {
    return Journald.entries("SHMGUARD_EVENT", "remount_refused").stream()
        .filter(n -> n.path("SHM_REASON").asText().contains("only reports")).toList();
  }

  private static MountEntry hostShm() throws java.io.IOException {
    MountEntry last = null;
    for (MountEntry e : MountEntry.parseAll(Files.readString(Path.of("/proc/self/mountinfo")))) {
      if (e.mountPoint().equals("/dev/shm")) {
        last = e;
      }
    }
    return last;
  }
}
