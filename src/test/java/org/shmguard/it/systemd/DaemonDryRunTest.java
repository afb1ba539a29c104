package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.ProtocolException;
import org.shmguard.nativ.Linux;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * {@code shmguard daemon --dry-run} as an operator runs it first on a GPU host: a real daemon
 * process on a real tmpfs, with no journald, so that every event is a log line on its standard
 * error. It says what it would reap and remount, and changes nothing.
 */
class DaemonDryRunTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void dryRunDaemonLogsWhatItWouldReapAndRemountAndChangesNothing() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777")) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "dry-run-");
      Path log = dir.resolve("daemon.log");
      Path leaked = shm.createSegment("nccl-Dry001", 100 * 1024);
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
          + "capacity:\n  warn: 50\n  critical: 80\n  hysteresis: 10\n"
          + "advice:\n  socket: " + dir.resolve("advice.sock") + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "remount:\n  enabled: true\n  targetSize: 4M\n  maxSize: 16M\n  cooldown: 1h\n");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "--dry-run", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      String wouldReap = "dry run: would reap " + shm.path() + "/nccl-Dry001 (100K, ";
      try {
        Eventually.until("the would-reap line", PATIENCE, () -> read(log).contains(wouldReap));
        shm.createSegment("not-a-segment", 800 * 1024); // 88%: past critical
        Eventually.until("the would-remount line", PATIENCE, () -> read(log).contains("dry run: would grow from 1.0M to 4.0M"));

        assertThatThrownBy(() -> AdviceClient.ask(dir.resolve("advice.sock"), "REMOUNT v1 dev=" + shm.dev() + " size=8388608",
            Duration.ofSeconds(30))).as("root's remount over the socket").isInstanceOf(ProtocolException.class)
            .hasMessageContaining("dry run: would grow from 1.0M to 8.0M");
        assertThat(AdviceClient.ask(dir.resolve("advice.sock"), "CLEAN v1 dry-run=false", Duration.ofSeconds(30)))
            .as("root's clean over the socket").startsWith("would reap 1 of 1 candidate; 0 blockers");
        assertThat(leaked).exists();
        assertThat(Linux.get().statvfs(shm.path().toString()).sizeBytes()).as("the tmpfs's size").isEqualTo(1L << 20);
        assertThat(shm.path().toFile().list()).containsExactlyInAnyOrder("nccl-Dry001", "not-a-segment");

        String line = lineWith(read(log), wouldReap);
        assertThat(line).contains("age ").contains("[SHMGUARD_EVENT=segment_leaked ").contains("SHM_VERDICT=leaked")
            .contains("SHM_BYTES=102400");
        assertThat(line.split("unheld and unchanged for", -1)).as("the reason, once: " + line).hasSize(2);
        assertThat(line.length()).as(line).isLessThan(400);
        assertThat(read(log)).contains("shmguard starting in a dry run")
            .contains("), verdict leaked: unheld and unchanged for ");
        assertThat(lineWith(read(log), "), verdict leaked: ")).contains("dry run: " + shm.path() + "/nccl-Dry001 (100K, nccl, age ");

        daemon.destroy(); // SIGTERM
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).isZero();
        assertThat(read(log)).contains("shmguard stopping: asked to stop; ").contains(" reaped since start (dry run: nothing unlinked)")
            .contains("shmguard stopped");
        assertThat(leaked).exists();
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon's output:\n" + read(log), e);
      } finally {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        Files.deleteIfExists(log);
      }
    }
  }

  private static String lineWith(String text, String part) {
    List<String> lines = text.lines().filter(l -> l.contains(part)).toList();
    assertThat(lines).as("lines with " + part).isNotEmpty();
    return lines.get(0);
  }

  private static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
