package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** `shmguard daemon` under a NOTIFY_SOCKET the test listens on, as systemd would run it (Type=notify). */
class ServiceNotifyTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void daemonSendsReadyStatusWatchdogAndStoppingThenExitsZeroOnSigterm() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        NotifySocket socket = NotifySocket.bind(Sandbox.MOUNTS.resolve("notify-" + ProcessHandle.current().pid()))) {
      Path config = TestConfig.watching(shm.path(), "2m"); // metrics off: port 9477 may be taken here
      Path log = Sandbox.MOUNTS.resolve("daemon-" + ProcessHandle.current().pid() + ".log");
      ProcessBuilder pb = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("NOTIFY_SOCKET", socket.path().toString());
      pb.environment().put("WATCHDOG_USEC", "400000"); // ping every 200 ms
      Process daemon = pb.start();
      try {
        List<String> got = new ArrayList<>();
        String first = socket.receive(PATIENCE);
        got.add(first);
        assertThat(first).as("first message").startsWith("READY=1\nSTATUS=").contains("1 mount").contains("0 leaked");

        int watchdogs = 0;
        while (watchdogs < 3) {
          String m = socket.receive(PATIENCE);
          assertThat(m).as("messages so far: " + got).isNotNull();
          got.add(m);
          if (m.equals("WATCHDOG=1")) {
            watchdogs++;
          }
        }

        daemon.destroy(); // SIGTERM
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).isZero();
        String m;
        boolean stopping = false;
        while ((m = socket.receive(Duration.ofSeconds(2))) != null) {
          stopping |= m.startsWith("STOPPING=1");
        }
        assertThat(stopping).as("STOPPING=1 after SIGTERM").isTrue();
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon's output:\n" + java.nio.file.Files.readString(log), e);
      } finally {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        java.nio.file.Files.deleteIfExists(log);
      }
    }
  }
}
