package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A signal that reaches {@code shmguard daemon} while it is still starting: its advice socket is
 * already bound, its worker and schedules not yet running. SIGTERM must still end it with status
 * 0 and take the socket file with it (systemd stopping a unit that is starting, a test's daemon
 * stopped early); SIGHUP must not end it, and the
 * reload it asks for is made once the service runs. Before signals were caught from the start, the
 * JVM's default handling exited 143 or 129 there and left the socket file behind.
 */
class SignalDuringStartTest {
  @Test
  void sigtermRightAfterTheSocketIsBoundExitsZeroAndRemovesTheSocket() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777")) {
      for (int round = 0; round < 3; round++) {
        Path socket = Sandbox.MOUNTS.resolve("signal-start-" + ProcessHandle.current().pid() + "-" + round + ".sock");
        Process daemon = start(shm, socket, round);
        try {
          awaitSocketFile(daemon, socket);
          daemon.destroy(); // SIGTERM at once, while the service is still starting

          assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
          assertThat(daemon.exitValue()).as("round %d: exit status on SIGTERM during start-up\n%s", round, log(round))
              .isZero();
          assertThat(socket).as("round %d: the socket file after the stop", round).doesNotExist();
        } finally {
          daemon.destroyForcibly();
        }
      }
    }
  }

  @Test
  void sighupDuringStartUpDoesNotEndTheDaemon() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777")) {
      Path socket = Sandbox.MOUNTS.resolve("signal-hup-" + ProcessHandle.current().pid() + ".sock");
      Process daemon = start(shm, socket, 9);
      try {
        awaitSocketFile(daemon, socket);
        Runtime.getRuntime().exec(new String[] {"kill", "-HUP", Long.toString(daemon.pid())}).waitFor();

        assertThat(AdviceClient.ask(socket, "PING", java.time.Duration.ofSeconds(30))).isEqualTo("pong\n");
        assertThat(daemon.isAlive()).as("alive after SIGHUP during start-up\n%s", log(9)).isTrue();
        // kept, not lost: the configuration is read again once the service runs
        org.shmguard.testing.Eventually.until(() -> "the kept reload in the log:\n" + log(9), java.time.Duration.ofSeconds(30),
            () -> log(9).contains("SHMGUARD_EVENT=config_reloaded"));
        daemon.destroy();
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).as(log(9)).isZero();
        assertThat(socket).doesNotExist();
      } finally {
        daemon.destroyForcibly();
      }
    }
  }

  private static Process start(TmpfsMount shm, Path socket, int round) throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "signal-start-");
    Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
        + "advice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n");
    return new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(logFile(round).toFile()).start();
  }

  /** Polls every millisecond: the signal must land in the start-up, not after it. */
  private static void awaitSocketFile(Process daemon, Path socket) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(socket)) {
      assertThat(daemon.isAlive()).as("the daemon before binding its socket").isTrue();
      assertThat(System.nanoTime()).as("the socket file to appear").isLessThan(end);
      Thread.sleep(1);
    }
  }

  private static Path logFile(int round) {
    return Sandbox.MOUNTS.resolve("signal-start-" + ProcessHandle.current().pid() + "-" + round + ".log");
  }

  private static String log(int round) {
    try {
      return Files.readString(logFile(round));
    } catch (java.io.IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }
}
