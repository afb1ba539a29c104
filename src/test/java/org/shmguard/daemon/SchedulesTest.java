package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The clock's triggers without Quartz's scheduler: the sweep at its interval, the summary at its cron times. */
class SchedulesTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
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

  private void start(String daemonSection) throws IOException {
    shm = TmpfsMount.create("size=8m,mode=1777");
    daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
        + "daemon:\n" + daemonSection)), HostPaths.system(), sink, ServiceNotifier.none());
    Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
  }

  @Test
  void aSummaryCronOfEverySecondWritesASummaryEachSecond() throws Exception {
    start("  summary: \"* * * * * ?\"\n");

    Eventually.until("two summaries", PATIENCE, () -> sink.of(EventKind.SUMMARY).size() >= 2);
  }

  @Test
  void theSweepRunsAtItsIntervalWithNothingElseHappening() throws Exception {
    start("  interval: 1s\n  rediscover: 1h\n  summary: \"\"\n");
    long passes = daemon.status().passes();

    Eventually.until("two sweeps", PATIENCE, () -> daemon.status().passes() >= passes + 2);
    assertThat(sink.of(EventKind.SUMMARY)).isEmpty();
  }
}
