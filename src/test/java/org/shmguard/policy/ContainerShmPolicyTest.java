package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.doctor.ShmNeed;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.text.SizeSpec;

class ContainerShmPolicyTest {
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;
  private static final long RAM = 64 * GIB;
  private final ContainerShmPolicy halfOfMemory = new ContainerShmPolicy(SizeSpec.ofPercent(50));

  @Test
  void fourGpusInDockersDefaultSixtyFourMegabytesGrowToTheDoctorsRecommendation() {
    ContainerShmPolicy.Sizing s = halfOfMemory.size(4, 64 * MIB, null, RAM);
    assertThat(s.needBytes()).isEqualTo(ShmNeed.of(4, NcclFacts.LARGEST_KNOWN).totalBytes()).isGreaterThan(64 * MIB);
    assertThat(s.enough()).isFalse();
    assertThat(s.fits()).isTrue();
    assertThat(s.targetBytes()).isEqualTo(GIB).isEqualTo(ShmNeed.of(4, NcclFacts.LARGEST_KNOWN).recommendedBytes());
    assertThat(s.reason()).isEqualTo("4 GPUs need up to 186M of /dev/shm, it has 64.0M: size 1.0G");
  }

  @Test
  void aShmSizeThatHoldsTheNeedIsLeftAlone() {
    ContainerShmPolicy.Sizing s = halfOfMemory.size(4, 256 * MIB, null, RAM);
    assertThat(s.enough()).isTrue();
    assertThat(s.targetBytes()).isEqualTo(256 * MIB);
    assertThat(s.reason()).startsWith("its /dev/shm of 256M is already enough for 4 GPUs");
  }

  @Test
  void theContainersMemoryLimitCapsTheSizeInWholePages() {
    ContainerShmPolicy.Sizing s = halfOfMemory.size(4, 64 * MIB, 512 * MIB + 100, RAM);
    assertThat(s.targetBytes()).isEqualTo(512 * MIB);
    assertThat(s.fits()).isTrue();
    assertThat(s.reason()).endsWith("capped by the container's memory limit (512M)");
  }

  @Test
  void aLimitBelowTheNeedStillCapsAndSaysItFallsShort() {
    ContainerShmPolicy.Sizing s = halfOfMemory.size(8, 64 * MIB, 128 * MIB, RAM);
    assertThat(s.targetBytes()).isEqualTo(128 * MIB);
    assertThat(s.fits()).isFalse();
    assertThat(s.reason()).endsWith(", still short of the need");
  }

  @Test
  void aContainerClaimingTenThousandGpusGetsNoMoreThanRemountMaxSize() {
    ContainerShmPolicy.Sizing s = new ContainerShmPolicy(SizeSpec.ofBytes(2 * GIB)).size(10_000, 64 * MIB, null, RAM);
    assertThat(s.targetBytes()).isEqualTo(2 * GIB);
    assertThat(s.needBytes()).isEqualTo(ContainerShmPolicy.needBytes(JobShape.MAX_RANKS));
    assertThat(s.reason()).startsWith("10000 GPUs (sized as 1024, the most counted) need up to ")
        .contains("capped by remount.maxSize (2147483648 bytes)");
  }
}
