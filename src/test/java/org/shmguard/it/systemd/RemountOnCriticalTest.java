package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Linux;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The daemon as operators run it: a mount that crosses capacity.critical is grown once to
 * remount.targetSize, its options kept, and the remount is in the journal with before and after.
 */
class RemountOnCriticalTest {

  private static long sizeOf(TmpfsMount shm) {
    try {
      return Linux.get().statvfs(shm.path().toString()).sizeBytes();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void aMountPastCriticalIsGrownOnceAndTheJournalSaysFromWhatToWhat() throws Exception {
    try (Journald journald = Journald.start(); TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777,nosuid,nodev")) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "critical-");
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
          + "capacity:\n  warn: 50\n  critical: 80\n  hysteresis: 10\n"
          + "advice:\n  socket: " + dir.resolve("advice.sock") + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "remount:\n  enabled: true\n  targetSize: 4M\n  maxSize: 16M\n  cooldown: 1h\n");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
      try {
        Eventually.until("the daemon's socket", Duration.ofSeconds(60), () -> Files.exists(dir.resolve("advice.sock")));
        shm.createSegment("not-a-segment", 900 * 1024); // 88%: past critical, and nothing shmguard may reap

        Eventually.until("the tmpfs grown to 4M", Duration.ofSeconds(60),
            () -> sizeOf(shm) == 4L << 20);
        Eventually.until("a remount_grown entry", Duration.ofSeconds(30),
            () -> !Journald.entries("SHMGUARD_EVENT", "remount_grown").isEmpty());

        List<JsonNode> grown = Journald.entries("SHMGUARD_EVENT", "remount_grown");
        assertThat(grown).hasSize(1);
        JsonNode e = grown.get(0);
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(shm.path().toString());
        assertThat(e.get("SHM_SIZE_BEFORE").asText()).isEqualTo("1048576");
        assertThat(e.get("SHM_SIZE_AFTER").asText()).isEqualTo("4194304");
        assertThat(e.get("SHM_OPTIONS_AFTER").asText()).contains("nosuid").contains("nodev");
        assertThat(e.get("PRIORITY").asText()).isEqualTo("5");
        assertThat(Cmd.run("findmnt", "-n", "-o", "OPTIONS", shm.path().toString())).contains("nosuid", "nodev", "size=4096k");
      } finally {
        daemon.destroy();
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
      }
    }
  }
}
