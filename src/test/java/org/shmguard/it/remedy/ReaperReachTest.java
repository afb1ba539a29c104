package org.shmguard.it.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The reaper acts only through a handle on the very mount that was judged. */
class ReaperReachTest {

  @Test
  void aMountCoveredAfterItWasJudgedIsNotReapedInAndNeitherIsTheCover() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777")) {
      Path leaked = shm.createSegment("nccl-Judged1", 4100);
      Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system()).judge();
      assertThat(j.plan().candidates()).hasSize(1);
      try (TmpfsMount cover = TmpfsMount.createAt(shm.path(), "size=1m,mode=1777")) {
        Path onCover = cover.createSegment("nccl-Judged1", 4100);

        List<ReapOutcome> done = new Reaper(new HolderScanner(HostPaths.system())::scan).execute(j.plan(), false);

        assertThat(done).singleElement().satisfies(o -> {
          assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(o.detail()).contains("no longer leads to the root of mount");
        });
        assertThat(onCover).exists();
      }
      assertThat(leaked).exists();
    }
  }
}
