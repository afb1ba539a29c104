package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The confirming pass: a segment that gains a holder after it was judged leaked is not reaped. */
class GainedHolderTest {

  @Test
  void segmentThatGainsAHolderBetweenScanAndUnlinkIsNotReaped() {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Late01", 9_637_892);
      HostPaths host = HostPaths.system();
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), host);
      Judgement j = engine.judge();
      assertThat(j.plan().candidates()).singleElement().extracting(a -> a.verdict()).isEqualTo(Verdict.LEAKED);

      try (Holder peer = Holder.start("map", seg.toString())) {
        List<ReapOutcome> done = new Reaper(new HolderScanner(host)::scan).execute(j.plan(), false);

        assertThat(done).singleElement().satisfies(o -> {
          assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(o.detail()).contains("gained a holder").contains(Integer.toString(peer.pid()));
        });
        assertThat(seg).exists();
      }
    }
  }

  @Test
  void segmentReplacedByAnotherFileOfTheSameNameIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Swap01", 4100);
      HostPaths host = HostPaths.system();
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), host);
      Judgement j = engine.judge();
      java.nio.file.Files.delete(seg);
      shm.createSegment("nccl-Swap01", 4100);

      List<ReapOutcome> done = new Reaper(new HolderScanner(host)::scan).execute(j.plan(), false);

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("different file");
      });
      assertThat(seg).exists();
    }
  }
}
