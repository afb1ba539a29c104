package org.shmguard.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * NCCL's figures as shmguard keeps them: the proxy ops pool and the NVLS segment per release (as
 * measured from each tag's headers), the reference count, and the sizes an unknown release is
 * given. (How a job adds them up is NcclFootprintTest's.)
 */
class NcclFactsTest {

  @Test
  void proxyPoolSizesMatchTheStructMeasuredPerTag() {
    // sizeof(struct ncclProxyOpsPool), g++ x86-64, each tag's own headers
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 12, 7))).isEqualTo(4_194_656);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 19, 4))).isEqualTo(4_194_656);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 20, 3))).isEqualTo(5_767_520);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 22, 3))).isEqualTo(7_340_384);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 23, 4))).isEqualTo(10_486_112);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 25, 1))).isEqualTo(31_850_880);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 27, 7))).isEqualTo(33_030_528);
    assertThat(NcclFacts.proxyPoolBytes(NcclVersion.of(2, 28, 3))).isEqualTo(34_210_176);
    // 232-byte ops x 2048 per peer x 72 local ranks, the free lists (8 + 288), mutex 40, condvar 48
    assertThat(232L * 2048 * 72 + 8 + 72 * 4 + 40 + 48).isEqualTo(34_210_176);
  }

  @Test
  void nvlsSegmentFollowsEachReleasesFormula() {
    assertThat(NcclFacts.nvlsSegmentBytes(NcclVersion.of(2, 19, 4), 8)).isEqualTo((8 + 80 * 8) * 2);
    assertThat(NcclFacts.nvlsSegmentBytes(NcclVersion.of(2, 28, 3), 8)).isEqualTo((128 + 2560) * 8 * 2);
    assertThat(NcclFacts.nvlsSegmentBytes(NcclVersion.of(2, 30, 3), 4)).isEqualTo(3_328 * 4);
    assertThat(NcclFacts.nvlsSegmentBytes(NcclVersion.of(2, 18, 6), 8)).isZero();
  }

  @Test
  void thePoolGrowsExactlyAtTheReleasesListedAndAnUnknownOneGetsTheLargest() {
    long before = 0;
    for (NcclVersion v : NcclFacts.PROXY_POOL_RESIZED) {
      NcclVersion previous = v.patch() > 0 ? NcclVersion.of(v.major(), v.minor(), v.patch() - 1)
          : NcclVersion.of(v.major(), v.minor() - 1, 99);
      assertThat(NcclFacts.proxyPoolBytes(previous)).as("just before %s", v).isEqualTo(before);
      assertThat(NcclFacts.proxyPoolBytes(v)).as("from %s", v).isGreaterThan(before);
      before = NcclFacts.proxyPoolBytes(v);
    }
    assertThat(NcclFacts.largestProxyPoolBytes()).isEqualTo(before).isEqualTo(NcclFacts.proxyPoolBytes(NcclFacts.LARGEST_KNOWN));
  }

  @Test
  void theLargestKnownReleaseHasTheLargestNvlsSegmentOfThoseKnown() {
    long largest = NcclFacts.nvlsSegmentBytes(NcclFacts.LARGEST_KNOWN, 8);
    for (String tag : List.of("2.19.4", "2.20.3", "2.21.5", "2.23.4", "2.24.3", "2.25.1", "2.26.2", "2.27.7", "2.28.3",
        "2.28.7", "2.29.7", "2.30.3")) {
      assertThat(NcclFacts.nvlsSegmentBytes(NcclVersion.parse(tag), 8)).as(tag).isLessThanOrEqualTo(largest);
    }
    assertThat(largest).isEqualTo(5_632L * 8);
    assertThat(NcclFacts.nvlsSegmentBytes(NcclFacts.LARGEST_KNOWN, 0)).isZero();
  }

  @Test
  void theReferenceCountIsFourBytesFrom2162() {
    assertThat(NcclFacts.refcountBytes(NcclVersion.of(2, 16, 1))).isZero();
    assertThat(NcclFacts.refcountBytes(NcclVersion.of(2, 16, 2))).isEqualTo(4);
    assertThat(NcclFacts.refcountBytes(NcclVersion.of(2, 30, 7))).isEqualTo(4);
    assertThat(NcclFacts.SHM_RECV_BYTES).isEqualTo(NcclFacts.shmRecvBytes(NcclFacts.LL_BYTES, NcclFacts.LL128_BYTES,
        NcclFacts.SIMPLE_BYTES)).isEqualTo(9_637_888);
  }
}
