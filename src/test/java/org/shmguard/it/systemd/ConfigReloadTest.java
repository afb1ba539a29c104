package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * {@code systemctl reload shmguard} as the unit's ExecReload= does it: SIGHUP to a real daemon
 * process under a NOTIFY_SOCKET the test listens on, configured with a main file and a drop-in
 * directory, with no journald (every event is a log line on its standard error). A good
 * configuration is applied from the next pass (observe-only turned off: the leak it knew is
 * reaped at once); a bad one is rejected with its file, line and key, and the daemon runs on with
 * the one before.
 */
class ConfigReloadTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void sighupAppliesAGoodConfigurationAndKeepsTheRunningOneWhenTheNewOneIsBad() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        NotifySocket socket = NotifySocket.bind(Sandbox.MOUNTS.resolve("notify-reload-" + ProcessHandle.current().pid()))) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "reload-");
      Path main = dir.resolve("shmguard.yaml");
      Files.copy(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
          + "advice:\n  enabled: false\n"), main);
      Path dropIns = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
      Path observe = dropIns.resolve("10-observe.yaml");
      Files.writeString(observe, "reap:\n  dryRun: true\n");
      Path log = dir.resolve("daemon.log");
      ProcessBuilder pb = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", main.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("NOTIFY_SOCKET", socket.path().toString());
      Process daemon = pb.start();
      Path seg = shm.file("nccl-Reload1");
      try (Holder rank = Holder.start("create-map:4100", seg.toString())) {
        assertThat(socket.receive(PATIENCE)).as("first message").startsWith("READY=1\nSTATUS=");
        assertThat(read(log)).contains("shmguard starting in a dry run").contains(main + " + shmguard.yaml.d/10-observe.yaml");
        statusWith(socket, "1 segment, 0 leaked"); // a pass saw it held (its holder made it held, and never let go)

        rank.kill();
        Eventually.until("the would-reap line (observe-only, from the drop-in)", PATIENCE,
            () -> read(log).contains("dry run: would reap " + seg));
        assertThat(seg).as("observe-only reaps nothing").exists();

        // Reaping on: the drop-in goes, as configuration management would remove it, then reload.
        Files.delete(observe);
        Files.writeString(dropIns.resolve("20-interval.yaml"), "daemon:\n  interval: 10s\n");
        long hupAt = System.nanoTime();
        hup(daemon);
        List<String> messages = messagesUntilReady(socket);
        assertThat(messages.get(0)).startsWith("RELOADING=1\nSTATUS=reloading the configuration\nMONOTONIC_USEC=");
        Eventually.until("the leak known before the reload is reaped", PATIENCE, () -> !seg.toFile().exists());
        double tookMs = (System.nanoTime() - hupAt) / 1e6;
        System.out.printf("SIGHUP (dryRun off) -> known leak reaped: %.0f ms (grace 1h)%n", tookMs);
        assertThat(tookMs).as("at once, not after the 1h grace").isLessThan(PATIENCE.toMillis());
        assertThat(lineWith(read(log), "SHMGUARD_EVENT=config_reloaded")).contains("applied reap.dryRun from the next pass")
            .contains("daemon.interval take effect at the next restart").contains("SHM_CHANGED=reap.dryRun")
            .contains("SHM_RESTART_NEEDED=daemon.interval");
        Eventually.until("the reap with its evidence", PATIENCE, () -> read(log).contains("SHMGUARD_EVENT=segment_reaped"));

        // A bad drop-in: rejected with its file, line and key; the daemon runs on with reaping on.
        Path bad = dropIns.resolve("30-bad.yaml");
        Files.writeString(bad, "# a typo\nreap:\n  dryRun: yes please\n");
        hup(daemon);
        List<String> afterBad = messagesUntilReady(socket);
        assertThat(afterBad.get(0)).startsWith("RELOADING=1");
        assertThat(afterBad.get(afterBad.size() - 1)).contains("reload rejected (" + bad + ":3: reap.dryRun:");
        String rejected = lineWith(read(log), "SHMGUARD_EVENT=config_rejected");
        assertThat(rejected).contains("configuration reload rejected, running on with " + main)
            .contains("SHM_CONFIG_FILE=" + bad).contains("SHM_CONFIG_LINE=3").contains("SHM_CONFIG_KEY=reap.dryRun");
        assertThat(daemon.isAlive()).as("a bad reload never stops the daemon").isTrue();

        Path seg2 = shm.file("nccl-Reload2");
        try (Holder second = Holder.start("create-map:4100", seg2.toString())) {
          statusWith(socket, "1 segment, 0 leaked");
          second.kill();
          Eventually.until("reaped under the configuration kept (reaping on)", PATIENCE, () -> !seg2.toFile().exists());
        }
        assertThat(read(log)).doesNotContain("dry run: would reap " + seg2);

        daemon.destroy();
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).isZero();
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon's output:\n" + read(log), e);
      } finally {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void reloadOverTheSocketExitsNonZeroOnARejectedDropInAndTheJournalSaysEachOnce() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777")) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "reload-socket-");
      Path main = dir.resolve("shmguard.yaml");
      Path socket = dir.resolve("advice.sock");
      Files.copy(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n"), main);
      Path dropIns = Files.createDirectory(dir.resolve("shmguard.yaml.d"));
      Path log = dir.resolve("daemon.log");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", main.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        Eventually.until("the daemon's socket", PATIENCE, () -> read(log).contains("advice socket listening on"));
        Files.writeString(dropIns.resolve("20-interval.yaml"), "reap:\n  grace: 2h\n");
        org.shmguard.testing.CliRun good = org.shmguard.testing.CliRun.of("reload", "--socket", socket.toString());
        assertThat(good.status()).as(good.err()).isZero();
        assertThat(good.out()).startsWith("configuration reloaded from " + main + " + shmguard.yaml.d/20-interval.yaml: applied reap.grace");
        Eventually.until("the config_reloaded line", PATIENCE, () -> read(log).contains("config_reloaded"));
        long reloaded = read(log).lines().filter(l -> l.contains("configuration reloaded from")).count();
        assertThat(reloaded).as("said once").isEqualTo(1);

        Path bad = dropIns.resolve("30-bad.yaml");
        Files.writeString(bad, "# a typo\nreap:\n  dryRun: yes please\n");
        org.shmguard.testing.CliRun rejected = org.shmguard.testing.CliRun.of("reload", "--socket", socket.toString());
        assertThat(rejected.status()).as("a rejected drop-in fails the reload").isEqualTo(1);
        assertThat(rejected.err()).startsWith("shmguard reload: rejected: configuration reload rejected, running on with " + main)
            .contains(bad + ":3: reap.dryRun:");
        long rejectedLines = read(log).lines().filter(l -> l.contains("configuration reload rejected")).count();
        assertThat(rejectedLines).as("said once").isEqualTo(1);
        assertThat(daemon.isAlive()).isTrue();

        org.shmguard.testing.CliRun noDaemon = org.shmguard.testing.CliRun.of("reload", "--socket", dir.resolve("none.sock").toString());
        assertThat(noDaemon.status()).isEqualTo(3);
        assertThat(noDaemon.err()).startsWith("shmguard reload: no daemon answers on " + dir.resolve("none.sock"));
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon's output:\n" + read(log), e);
      } finally {
        daemon.destroy();
        daemon.waitFor(30, TimeUnit.SECONDS);
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  private static void hup(Process daemon) throws Exception {
    assertThat(new ProcessBuilder("kill", "-HUP", String.valueOf(daemon.pid())).inheritIO().start().waitFor()).isZero();
  }

  /** Waits for a STATUS= line that says {@code text}. */
  private static void statusWith(NotifySocket socket, String text) throws InterruptedException {
    List<String> got = new ArrayList<>();
    while (true) {
      String m = socket.receive(PATIENCE);
      assertThat(m).as("notify messages so far: " + got).isNotNull();
      got.add(m);
      if (m.contains("STATUS=") && m.contains(text)) {
        return;
      }
    }
  }

  /** Every notify message from the next RELOADING=1 to the READY=1 that ends it (watchdog and status lines in between). */
  private static List<String> messagesUntilReady(NotifySocket socket) throws InterruptedException {
    List<String> got = new ArrayList<>();
    long end = System.nanoTime() + PATIENCE.toNanos(); // status lines keep coming: bound the whole wait, not each one
    while (true) {
      assertThat(System.nanoTime()).as("RELOADING=1 ... READY=1 within %s; got %s", PATIENCE, got).isLessThan(end);
      String m = socket.receive(PATIENCE);
      assertThat(m).as("notify messages so far: " + got).isNotNull();
      if (got.isEmpty() && !m.startsWith("RELOADING=1")) {
        continue; // a status line from a pass before the signal
      }
      got.add(m);
      if (m.startsWith("READY=1")) {
        return got;
      }
    }
  }

  private static String lineWith(String text, String part) {
    List<String> lines = text.lines().filter(l -> l.contains(part)).toList();
    assertThat(lines).as("lines with " + part).isNotEmpty();
    return lines.get(lines.size() - 1);
  }

  private static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
