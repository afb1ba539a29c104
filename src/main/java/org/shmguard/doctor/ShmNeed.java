package org.shmguard.doctor;

import org.shmguard.policy.NcclFacts;
import org.shmguard.policy.NcclVersion;

/**
 * What one NCCL job of {@code ranks} local ranks puts in its /dev/shm, from {@link NcclFacts}: the
 * SHM transport's segments (a ring of {@link NcclFacts#DEFAULT_CHANNELS} channels, one receive
 * and one send segment per rank and channel) and every rank's proxy ops pool. A floor, not a
 * ceiling: more channels or NCCL_P2P_DISABLE=1 need more.
 *
 * <pre>{@code
 * ShmNeed need = ShmNeed.of(4, NcclVersion.of(2, 21, 5));
 * need.transportBytes();   // 77,135,936: more than Docker's 64 MB
 * }</pre>
 */
public record ShmNeed(int ranks, NcclVersion version, long transportBytes, long poolBytes) {
  private static final long GIB = 1L << 30;

  public ShmNeed {
    if (ranks < 1) {
      throw new IllegalArgumentException("ranks must be at least 1, not " + ranks);
    }
  }

  public static ShmNeed of(int ranks, NcclVersion version) {
    return new ShmNeed(ranks, version, NcclFacts.shmTransportBytes(ranks, NcclFacts.DEFAULT_CHANNELS),
        NcclFacts.proxyPoolsBytes(ranks, version));
  }

  public long totalBytes() {
    return transportBytes + poolBytes;
  }

  /** A size to grow to: twice the need, in whole GiB, at least 1 GiB (what the reports' fixes used). */
  public long recommendedBytes() {
    long twice = 2 * totalBytes();
    return Math.max(GIB, (twice + GIB - 1) / GIB * GIB);
  }

  /** The recommended size in whole GiB, for commands: 1 for "--shm-size=1g". */
  public long recommendedGib() {
    return recommendedBytes() / GIB;
  }
}
