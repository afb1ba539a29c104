package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * The daemon's "every holder has exited" fast path against a holder whose main thread has exited
 * while another thread holds the segment: the process is alive, so the segment stays; once the
 * whole process exits, it goes at once (the grace is an hour).
 */
class ExitedMainThreadDaemonTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private Daemon daemon;
  private TmpfsMount shm;

  @AfterEach
  void stop() {
    if (daemon != null) {
      daemon.close();
    }
    if (shm != null) {
      shm.close();
    }
  }

  private void passAgain() {
    long passes = daemon.status().passes();
    daemon.sweepNow();
    Eventually.until("another pass", PATIENCE, () -> daemon.status().passes() > passes);
  }

  @ParameterizedTest
  @ValueSource(strings = {"exit-main-fd", "exit-main-map"})
  void holderWhoseMainThreadExitedIsNotTakenForExited(String mode) throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    daemon = Daemon.start(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system(), sink,
        ServiceNotifier.none());
    Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
    Path seg = shm.createSegment("nccl-NoMain", 9_637_892);
    long exitedAt;
    try (ThreadHolder holder = ThreadHolder.start(mode, seg)) {
      passAgain(); // an open makes no inotify event: a sweep finds the holder
      Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);

      holder.exitMainThread();
      passAgain();
      passAgain();

      assertThat(seg).exists();
      assertThat(holder.nlink()).isEqualTo(1);
      assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
      exitedAt = System.nanoTime();
    }

    RecordingSink.Received reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-NoMain", PATIENCE);

    System.out.printf("%s: holder exit -> segment reaped: %.1f ms%n", mode, (reaped.nanoTime() - exitedAt) / 1e6);
    assertThat(seg).doesNotExist();
    assertThat(reaped.alert().field("SHM_REASON")).contains("every process that held it has exited");
  }
}
