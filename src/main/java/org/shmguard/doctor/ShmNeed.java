package org.shmguard.doctor;

import org.shmguard.gpu.NcclFootprint;
import org.shmguard.gpu.NcclJob;
import org.shmguard.gpu.NcclVersion;

/**
 * What one NCCL job of {@code ranks} local ranks, one process each and without P2P, puts in its
 * /dev/shm as files, sized by {@link NcclFootprint}: on one node, the SHM transport's ring (the
 * most SHM buffers); in a multi-node job, a shorter chain and a proxy ops pool per rank (the most
 * in all, from 2.12 on, once pools are large). A floor, not a ceiling: more channels or
 * communicators need more; P2P or cuMem host memory need less.
 *
 * <pre>{@code
 * ShmNeed need = ShmNeed.of(4, NcclVersion.of(2, 21, 5));
 * need.transportBytes();   // 77,135,936: more than Docker's 64 MB
 * }</pre>
 */
public record ShmNeed(int ranks, NcclVersion version, NcclFootprint oneNode, NcclFootprint severalNodes) {
  private static final long GIB = 1L << 30;

  public ShmNeed {
    if (ranks < 1) {
      throw new IllegalArgumentException("ranks must be at least 1, not " + ranks);
    }
  }

  public static ShmNeed of(int ranks, NcclVersion version) {
    NcclJob one = NcclJob.singleNode(ranks, version);
    return new ShmNeed(ranks, version, NcclFootprint.of(one), NcclFootprint.of(one.withMultiNode(true)));
  }

  /** The SHM transport's segments of a single-node job: below this NCCL fails at init. */
  public long transportBytes() {
    return oneNode.shmBuffersBytes();
  }

  /** The proxy ops pools of a multi-node job (a pool per rank). */
  public long poolBytes() {
    return severalNodes.proxyPoolsBytes();
  }

  /** The larger of the two jobs' needs. */
  public NcclFootprint worst() {
    return severalNodes.totalBytes() > oneNode.totalBytes() ? severalNodes : oneNode;
  }

  public long totalBytes() {
    return worst().totalBytes();
  }

  /** A size to grow to: twice the need, in whole GiB, at least 1 GiB (what the reports' fixes used). */
  public long recommendedBytes() {
    return org.shmguard.policy.ContainerShmPolicy.recommendedBytes(totalBytes());
  }

  /** The recommended size in whole GiB, for commands: 1 for "--shm-size=1g". */
  public long recommendedGib() {
    return recommendedBytes() / GIB;
  }
}
