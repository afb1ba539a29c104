package org.shmguard.it.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Actor;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Fixtures;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Action;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** One pass is one call returning one report: the judgement, the plan, what was done, and every alert. */
class EngineTest {
  @Test
  void theDaemonsPassReapsALeakAndReportsItsAlertsInOneValue() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Engine1", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "0s"));
      Engine engine = Engine.create(config, HostPaths.system(), Fixtures.planner(config), null);

      PassReport report = engine.pass(false, false);

      assertThat(report.isPass()).isTrue();
      assertThat(report.plan().actions().get(0)).isInstanceOf(Action.Reap.class);
      assertThat(report.outcomes()).singleElement().satisfies(o ->
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(seg).doesNotExist();
      assertThat(report.alerts()).extracting(Alert::kind).containsExactly(EventKind.MOUNT_ADDED, EventKind.SEGMENT_REAPED);
      assertThat(report.remounts()).isEmpty();
    }
  }

  @Test
  void cleanPlansTheReapAloneAndRaisesNothing() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Engine2", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "0s"));
      Engine engine = Engine.create(config, HostPaths.system(), Fixtures.planner(config), null);

      PassReport dry = engine.clean(true);

      assertThat(dry.dryRun()).isTrue();
      assertThat(dry.plan().actions()).singleElement().isInstanceOf(Action.Reap.class);
      assertThat(dry.outcomes()).singleElement().satisfies(o ->
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.WOULD_REAP));
      assertThat(dry.alerts()).isEmpty();
      assertThat(seg).exists();
    }
  }

  @Test
  void aRemountThatThrowsIsAFailedRemountWithItsAlert() {
    Config config = TestConfig.load(TestConfig.write("mounts: [auto]\n"));
    List<String> asked = new ArrayList<>();
    Engine engine = Engine.create(config, HostPaths.system()).with(Fixtures.planner(config), new Actor() {
      @Override
      public List<ReapOutcome> reap(Action.Reap reap) {
        return List.of();
      }

      @Override
      public RemountOutcome remount(ShmMount mount, Long sizeBytes, String trigger) {
        asked.add(mount.displayName() + " " + sizeBytes + " " + trigger);
        throw new IllegalStateException("the mount API is gone");
      }
    });

    PassReport report = engine.remount(Fixtures.MOUNT, 1L << 30, "asked by root over the advice socket");

    assertThat(asked).containsExactly("/dev/shm 1073741824 asked by root over the advice socket");
    assertThat(report.isPass()).isFalse();
    assertThat(report.remounts()).singleElement().satisfies(o -> {
      assertThat(o.result()).isEqualTo(RemountOutcome.Result.FAILED);
      assertThat(o.detail()).contains("the mount API is gone");
    });
    assertThat(report.alerts()).extracting(Alert::kind).containsExactly(EventKind.REMOUNT_FAILED);
  }

  @Test
  void anEngineWithoutARemounterAnswersARemountWithNoReport() {
    Engine engine = Engine.create(TestConfig.load(TestConfig.write("mounts: [auto]\n")), HostPaths.system());

    assertThat(engine.remount(Fixtures.MOUNT, null, "asked by root over the advice socket")).isNull();
  }
}
