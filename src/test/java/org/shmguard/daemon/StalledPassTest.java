package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * A pass that the kernel does not let finish: the host root's proc/1/mountinfo is a FIFO that no
 * one writes, so the pass blocks in open(2) as it would on a filesystem that stopped answering.
 * The daemon reports the overrun and still stops at once; the pass resumes when the FIFO opens.
 */
class StalledPassTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private Path root;
  private Daemon daemon;

  @AfterEach
  void cleanUp() throws Exception {
    if (daemon != null) {
      daemon.stop();
      daemon.awaitStopped(PATIENCE);
    }
    if (root != null) {
      release(); // a pass still blocked on the FIFO returns: no thread outlives the test
      Cmd.run("rm", "-rf", root.toString());
    }
  }

  private Path fifo() {
    return root.resolve("proc/1/mountinfo");
  }

  /** Opens the FIFO for writing and closes it: a blocked reader gets end of file. */
  private void release() {
    Cmd.exec("timeout", "5", "sh", "-c", ": > \"$0\"", fifo().toString());
  }

  @Test
  void aPassPastItsDeadlineIsReportedAndTheDaemonStillStopsAtOnce() throws Exception {
    Sandbox.require();
    root = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "stuck-root-");
    Files.createDirectories(root.resolve("proc/1"));
    Cmd.run("mkfifo", fifo().toString());
    daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\ndaemon:\n  interval: 1s\n  rediscover: 500ms\n")),
        HostPaths.of(root.toString()), sink, ServiceNotifier.none(), Duration.ofMillis(300));

    Alert stalled = sink.await(a -> a.kind() == EventKind.PASS_STALLED, PATIENCE).alert();
    assertThat(stalled.message()).contains("a pass has run for", "nothing is reaped until it returns");

    release();
    assertThat(sink.await(a -> a.kind() == EventKind.PASS_STALLED && a.message().contains("finished after"), PATIENCE)
        .alert().message()).contains("reaping resumes");
    Eventually.until("the pass completed", PATIENCE, () -> daemon.status().passes() > 0);

    // The next pass blocks on the FIFO again; a stop request is honoured all the same.
    sink.await(a -> a.kind() == EventKind.PASS_STALLED && a.message().contains("has run for")
        && sink.of(EventKind.PASS_STALLED).size() >= 3, PATIENCE);
    long t0 = System.nanoTime();
    daemon.stop();
    assertThat(daemon.awaitStopped(Duration.ofSeconds(20))).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
  }
}
