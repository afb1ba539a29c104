package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Actor;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Action;
import org.shmguard.policy.Planner;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A leak is reaped by a planned action: the pass plans a Reap, the file stays until the daemon's
 * act stage carries it out, and the outcomes come back as data.
 */
class PlannedReapTest {

  private static Planner planner(Config config) {
    Config.Capacity c = config.capacity();
    return new Planner(config.reap().policy(), config.remount().policy(), c.policy(), c.topHolders());
  }

  @Test
  void aLeakIsUnlinkedOnlyWhenTheActStageCarriesOutThePlannedReap() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Planned1", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "0s"));
      Engine engine = Engine.create(config, HostPaths.system());
      List<Action.Reap> handed = new ArrayList<>();

      // The pass plans and hands its reap to an act stage that does nothing yet.
      PassReport planned = engine.with(planner(config), new Actor() {
        @Override
        public List<ReapOutcome> reap(Action.Reap r) {
          handed.add(r);
          return List.of();
        }

        @Override
        public RemountOutcome remount(ShmMount mount, Long sizeBytes, String trigger) {
          return null;
        }
      }).pass(false, false);

      assertThat(planned.plan().actions().get(0)).isInstanceOf(Action.Reap.class);
      assertThat(handed).singleElement().satisfies(r -> {
        assertThat(r.dryRun()).isFalse();
        assertThat(r.candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-Planned1");
      });
      assertThat(planned.outcomes()).isEmpty();
      assertThat(seg).exists();

      // The daemon's act stage carries it out through the reaper: confirming pass, lease, unlink.
      RecordingSink sink = new RecordingSink();
      List<ReapOutcome> outcomes = engine.reap(handed.get(0));

      assertThat(outcomes).singleElement().satisfies(o ->
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(seg).doesNotExist();
      assertThat(sink.all()).isEmpty(); // alerts come from the planner's report of the outcomes, not the act
    }
  }

  @Test
  void aDryRunPlansTheSameReapAndTheActStageReportsWouldReap() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Planned2", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "0s"));
      Engine engine = Engine.create(config, HostPaths.system());
      Planner planner = planner(config);

      PassReport dry = engine.with(planner, engine.actor()).pass(true, false);

      Action.Reap reap = (Action.Reap) dry.plan().actions().get(0);
      assertThat(reap.dryRun()).isTrue();
      assertThat(reap.candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-Planned2");
      assertThat(dry.dryRun()).isTrue();
      assertThat(dry.outcomes()).singleElement().satisfies(o ->
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.WOULD_REAP));
      assertThat(seg).exists();
      assertThat(Files.size(seg)).isEqualTo(64 << 10);
      assertThat(dry.alerts()).extracting(a -> a.kind())
          .containsExactly(EventKind.MOUNT_ADDED, EventKind.SEGMENT_LEAKED);

      // The one-shot clean goes the same way: the same candidates, reaped for real this time.
      PassReport clean = engine.clean(false);
      assertThat(clean.outcomes()).singleElement().satisfies(o -> {
        assertThat(o.candidate().segment().key()).isEqualTo(reap.candidates().get(0).segment().key());
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
      });
      assertThat(seg).doesNotExist();
    }
  }
}
