package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A restart or an upgrade with a leak the daemon already knew: daemon 1 (observe-only, as a
 * rollout starts) watches two jobs' segments with a grace of an hour; one job is SIGKILLed while
 * it watches, daemon 1 stops, the other job is SIGKILLed while no daemon runs, and daemon 2 (the
 * same state directory, reaping on) reaps both in its first pass, not an hour later. A state file
 * changed between the two is ignored with a warning, and then nothing is reaped before the grace.
 */
class RestartKnownLeakTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void aRestartReapsALeakTheDaemonBeforeItKnewAtOnce() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        NotifySocket socket = NotifySocket.bind(Sandbox.MOUNTS.resolve("notify-restart-" + ProcessHandle.current().pid()))) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "restart-");
      Path state = dir.resolve("state");
      Path config = config(shm);
      Path watched = shm.file("nccl-Known1");
      Path gap = shm.file("nccl-InGap1");
      Path log1 = dir.resolve("daemon1.log");
      Path log2 = dir.resolve("daemon2.log");
      try (Holder killedWhileWatched = Holder.start("create-map:4100", watched.toString());
          Holder killedInTheGap = Holder.start("create-map:4100", gap.toString())) {
        Process daemon1 = start(config, state, socket, log1, "--dry-run");
        try {
          statusWith(socket, "2 segments, 0 leaked");
          killedWhileWatched.kill();
          statusWith(socket, "2 segments, 1 leaked");
          stop(daemon1);
        } finally {
          daemon1.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(Files.readString(log1)).contains("dry run: would reap " + watched);
        assertThat(state.resolve("holders.json")).exists();
        assertThat(Files.getPosixFilePermissions(state.resolve("holders.json")))
            .containsExactlyInAnyOrder(java.nio.file.attribute.PosixFilePermission.OWNER_READ,
                java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
        killedInTheGap.kill(); // an upgrade's gap: no daemon watches
        assertThat(watched).exists();
        assertThat(gap).exists();

        long startedAt = System.nanoTime();
        Process daemon2 = start(config, state, socket, log2);
        try {
          String ready = statusWith(socket, "READY=1");
          double ms = (System.nanoTime() - startedAt) / 1e6;
          System.out.printf("restart with 2 known leaks (grace 1h): both reaped by READY, %.0f ms after the start%n", ms);
          assertThat(ready).as("the first pass reaped both").contains("2 reaped since start");
          assertThat(watched).doesNotExist();
          assertThat(gap).doesNotExist();
          String out = Files.readString(log2);
          assertThat(out).contains("holder history from before the restart: 2 segments with 2 holders")
              .contains("every process that held it has exited (" + killedWhileWatched.pid() + " ")
              .contains("every process that held it has exited (" + killedInTheGap.pid() + " ");
          stop(daemon2);
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + "\ndaemon 2's output:\n" + Files.readString(log2), e);
        } finally {
          daemon2.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  @Test
  void aStateFileChangedSinceTheDaemonWroteItIsIgnoredAndTheGraceHolds() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        NotifySocket socket = NotifySocket.bind(Sandbox.MOUNTS.resolve("notify-tamper-" + ProcessHandle.current().pid()))) {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "tamper-");
      Path state = dir.resolve("state");
      Path config = config(shm);
      Path seg = shm.file("nccl-Tamper1");
      Path log2 = dir.resolve("daemon2.log");
      try (Holder rank = Holder.start("create-map:4100", seg.toString())) {
        Process daemon1 = start(config, state, socket, dir.resolve("daemon1.log"), "--dry-run");
        try {
          statusWith(socket, "1 segment, 0 leaked");
          rank.kill();
          statusWith(socket, "1 segment, 1 leaked");
          stop(daemon1);
        } finally {
          daemon1.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
      }
      Path file = state.resolve("holders.json");
      String text = Files.readString(file);
      assertThat(text).contains("\"startTicks\":");
      // One holder's start time changed, as a hand edit or a bad disk would: the checksum no longer matches.
      Files.writeString(file, text.replaceFirst("\"startTicks\":(\\d)", "\"startTicks\":9$1"), StandardCharsets.UTF_8);

      Process daemon2 = start(config, state, socket, log2);
      try {
        assertThat(statusWith(socket, "READY=1")).contains("1 segment, 0 leaked");
        statusWith(socket, "STATUS="); // and the sweep after it (daemon.interval 1s)
        assertThat(seg).as("no evidence trusted: the file waits out its grace").exists();
        assertThat(Files.readString(log2)).contains("ignoring the holder history " + file
            + ": its checksum does not match its content (changed since shmguard wrote it)");
        stop(daemon2);
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon 2's output:\n" + Files.readString(log2), e);
      } finally {
        daemon2.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  private static Path config(TmpfsMount shm) {
    return TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\nadvice:\n  enabled: false\n");
  }

  private static Process start(Path config, Path state, NotifySocket socket, Path log, String... more) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
        "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString(),
        "--state-dir", state.toString()));
    cmd.addAll(List.of(more));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("NOTIFY_SOCKET", socket.path().toString());
    return pb.start();
  }

  private static void stop(Process daemon) throws InterruptedException {
    daemon.destroy(); // SIGTERM, as systemctl stop and an upgrade's restart send
    assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(daemon.exitValue()).isZero();
  }

  /** The next notify message that contains {@code text}. */
  private static String statusWith(NotifySocket socket, String text) throws InterruptedException {
    List<String> got = new ArrayList<>();
    while (true) {
      String m = socket.receive(PATIENCE);
      assertThat(m).as("waiting for " + text + "; notify messages so far: " + got).isNotNull();
      got.add(m);
      if (m.contains(text)) {
        return m;
      }
    }
  }
}
