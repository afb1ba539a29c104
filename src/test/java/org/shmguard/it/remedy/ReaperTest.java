package org.shmguard.it.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Acts;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Action;
import org.shmguard.policy.Assessment;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The reaper carries out a planned reap: the judged file, and only it, is unlinked. */
class ReaperTest {
  private static Reaper reaperOf(Engine engine) {
    return ((Acts) engine.actor()).reaper();
  }

  @Test
  void aLeakedFileIsUnlinkedAndADryRunLeavesItSayingItWould() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Reaper1", 64 << 10);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system());
      List<Assessment> leaked = engine.judge().plan().candidates();

      List<ReapOutcome> dry = reaperOf(engine).carry(new Action.Reap(leaked, true));
      assertThat(dry).singleElement().satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.WOULD_REAP));
      assertThat(seg).exists();

      List<ReapOutcome> done = reaperOf(engine).carry(new Action.Reap(leaked, false));
      assertThat(done).singleElement().satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(seg).doesNotExist();
    }
  }

  @Test
  void aFileReplacedUnderTheSameNameSinceTheJudgementIsLeftAlone() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Reaper2", 64 << 10);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system());
      List<Assessment> leaked = engine.judge().plan().candidates();
      Files.delete(seg);
      shm.createSegment("nccl-Reaper2", 64 << 10); // someone's new file, with the old name

      List<ReapOutcome> done = reaperOf(engine).carry(new Action.Reap(leaked, false));

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).isEqualTo("the name now leads to a different file");
        assertThat(o.leftLeaked()).isFalse();
      });
      assertThat(seg).exists();
    }
  }
}
