package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
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
      Engine.Planned planned = engine.pass(false, false, planner(config)::next, r -> {
        handed.add(r);
        return List.of();
      });

      assertThat(planned.plan().actions().get(0)).isInstanceOf(Action.Reap.class);
      assertThat(handed).singleElement().satisfies(r -> {
        assertThat(r.dryRun()).isFalse();
        assertThat(r.candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-Planned1");
      });
      assertThat(planned.pass().outcomes()).isEmpty();
      assertThat(seg).exists();

      // The daemon's act stage carries it out through the reaper: confirming pass, lease, unlink.
      RecordingSink sink = new RecordingSink();
      List<ReapOutcome> outcomes = Acts.bare(engine::reap, sink).carry(handed.get(0));

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
      Acts acts = Acts.bare(engine::reap, new RecordingSink());

      Engine.Planned dry = engine.pass(true, false, planner::next, acts::carry);

      Action.Reap reap = (Action.Reap) dry.plan().actions().get(0);
      assertThat(reap.dryRun()).isTrue();
      assertThat(reap.candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-Planned2");
      assertThat(dry.pass().dryRun()).isTrue();
      assertThat(dry.pass().outcomes()).singleElement().satisfies(o ->
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.WOULD_REAP));
      assertThat(seg).exists();
      assertThat(Files.size(seg)).isEqualTo(64 << 10);
      assertThat(planner.report(dry.pass().judgement(), dry.pass().outcomes(), java.util.Set.of()))
          .extracting(a -> ((Action.Raise) a).alert().kind())
          .containsExactly(EventKind.MOUNT_ADDED, EventKind.SEGMENT_LEAKED);

      // The one-shot clean goes the same way: the same candidates, reaped for real this time.
      Engine.Pass clean = engine.clean(false);
      assertThat(clean.outcomes()).singleElement().satisfies(o -> {
        assertThat(o.candidate().segment().key()).isEqualTo(reap.candidates().get(0).segment().key());
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
      });
      assertThat(seg).doesNotExist();
    }
  }
}
