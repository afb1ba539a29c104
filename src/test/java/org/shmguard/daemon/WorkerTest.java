package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The worker runs each pass as one call and hands its one report to every output before anyone waiting hears of it. */
class WorkerTest {
  @Test
  void everyOutputIsToldThePassesReportBeforeItsCallerIs() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Worker1", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "0s"));
      List<PassReport> told = new CopyOnWriteArrayList<>();
      try (Daemon daemon = Daemon.create(config, HostPaths.system(), new Outputs("test").add(told::add),
          ServiceNotifier.none(), null, PassThread.DEADLINE, HolderState.NONE).begin()) {

        PassReport pass = daemon.passNow().get(60, TimeUnit.SECONDS);

        assertThat(told).contains(pass);
        assertThat(seg).doesNotExist();
        assertThat(told.stream().filter(PassReport::isPass).flatMap(r -> r.outcomes().stream()))
            .extracting(ReapOutcome::result).containsExactly(ReapOutcome.Result.REAPED);
        assertThat(told.stream().flatMap(r -> r.alerts().stream())).extracting(a -> a.kind())
            .contains(EventKind.SEGMENT_REAPED);
      }
    }
  }

  @Test
  void theSummaryBetweenPassesReachesTheOutputsAsAReportWithoutAJudgement() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "1h"));
      List<PassReport> told = new CopyOnWriteArrayList<>();
      try (Daemon daemon = Daemon.create(config, HostPaths.system(), new Outputs("test").add(told::add),
          ServiceNotifier.none(), null, PassThread.DEADLINE, HolderState.NONE).begin()) {
        daemon.passNow().get(60, TimeUnit.SECONDS);

        daemon.summaryNow();

        org.shmguard.testing.Eventually.until("the summary", java.time.Duration.ofSeconds(30),
            () -> told.stream().anyMatch(r -> !r.isPass() && r.alerts().stream().anyMatch(a -> a.kind() == EventKind.SUMMARY)));
      }
    }
  }
}
