package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The clock's triggers without Quartz's scheduler: the sweep at its interval, the summary at its
 * cron times, and the heartbeat between sweeps, which brings a full pass only when a mount changed.
 */
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

  @Test
  void aQuietHostRunsNoFullPassBetweenSweepsWhileTheHeartbeatBeats() throws Exception {
    start("  interval: 1h\n  heartbeat: 200ms\n  rediscover: 1h\n  summary: \"\"\n");
    long passes = quiet();
    long beats = daemon.heartbeats();

    Eventually.until("ten heartbeats", PATIENCE, () -> daemon.heartbeats() >= beats + 10);

    assertThat(daemon.status().passes()).isEqualTo(passes);
  }

  @Test
  void aMountFillingWithoutAnEventBringsAPassAndItsCapacityAlertWithinTheHeartbeat() throws Exception {
    start("  interval: 1h\n  heartbeat: 500ms\n  rediscover: 1h\n  summary: \"\"\n");
    Path file = shm.file("data-filling");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      Eventually.until("the pass the new file brought", PATIENCE, () -> daemon.status().last().snapshot().mounts()
          .stream().anyMatch(m -> m.usage() != null && m.usage().inodes() - m.usage().freeInodes() >= 2));
      long passes = quiet();
      long filledAt = System.nanoTime();

      // 7.5 of 8 MiB (94 %, past capacity.warn) written through an open descriptor: IN_MODIFY, which the mount watches do not ask for
      ch.write(ByteBuffer.allocate(15 << 19));

      Eventually.until("a capacity alert", PATIENCE, () -> !sink.of(EventKind.CAPACITY_WARNING).isEmpty());
      assertThat(Duration.ofNanos(System.nanoTime() - filledAt)).isLessThan(Duration.ofSeconds(10));
      assertThat(daemon.status().passes()).isGreaterThan(passes);
    }
  }

  /** Waits until no pass ran for a second (what the first passes' own watches brought has run): the pass count then. */
  private long quiet() throws InterruptedException {
    long passes = -1;
    while (passes != daemon.status().passes()) {
      passes = daemon.status().passes();
      Thread.sleep(1000);
    }
    return passes;
  }
}
