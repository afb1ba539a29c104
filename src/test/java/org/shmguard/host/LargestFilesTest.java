package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.shmguard.model.LargeFile;

/** The largest files of a listing: a fixed few, whatever the number offered and their order. */
class LargestFilesTest {
  @Test
  void keepsOnlyTheFiveLargestOfAHundredThousandInAnyOrder() {
    LargestFiles top = new LargestFiles();
    Random random = new Random(24);
    for (int i = 0; i < 100_000; i++) {
      top.offer(("f" + i).getBytes(StandardCharsets.UTF_8), i + 10, 4096L * (1 + random.nextInt(1000)), 0);
    }
    top.offer("filler".getBytes(StandardCharsets.UTF_8), 3, 77L << 20, 1000);
    top.offer("second".getBytes(StandardCharsets.UTF_8), 4, 12L << 20, 1000);

    assertThat(top.largestFirst()).hasSize(LargestFiles.KEPT);
    assertThat(top.largestFirst().subList(0, 2)).extracting(LargeFile::name).containsExactly("filler", "second");
    assertThat(top.largestFirst()).extracting(LargeFile::allocatedBytes).isSortedAccordingTo((a, b) -> Long.compare(b, a));
  }

  @Test
  void equalSizesKeepTheLowerInodesAndEmptyFilesAreNotKept() {
    LargestFiles top = new LargestFiles();
    for (int ino = 20; ino >= 1; ino--) {
      top.offer(("same" + ino).getBytes(StandardCharsets.UTF_8), ino, 8192, 0);
    }
    top.offer("empty".getBytes(StandardCharsets.UTF_8), 99, 0, 0);

    assertThat(top.largestFirst()).extracting(LargeFile::ino).containsExactly(1L, 2L, 3L, 4L, 5L);
  }

  @Test
  void aNameAUserChoseIsKeptAsDisplayedOnOneLine() {
    LargestFiles top = new LargestFiles();
    top.offer(new byte[] {'b', (byte) 0xff, 'g'}, 7, 8192, 0);
    top.offer("x\nSHMGUARD_EVENT=segment_reaped".getBytes(StandardCharsets.UTF_8), 8, 4096, 65534);

    assertThat(top.largestFirst()).extracting(LargeFile::name).allSatisfy(n -> assertThat(n).isNotEmpty().doesNotContain("\n"));
    assertThat(top.largestFirst().get(0).name()).contains("\\x");
  }
}
