package org.shmguard.policy;

import java.util.Objects;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclFootprint;
import org.shmguard.gpu.NcclJob;
import org.shmguard.text.Bytes;
import org.shmguard.text.Counts;
import org.shmguard.text.SizeSpec;

/**
 * How large a starting container's /dev/shm should be for the GPUs it asks for, and whether the
 * size it was given is already enough. Pure: the GPU count, the sizes and the memory come in.
 * The need is NCCL's worst case for that many local ranks ({@link NcclFootprint}, one process per
 * rank, no P2P, the largest figures known: the more of a single-node ring and a multi-node chain
 * with a proxy pool per rank); the size to grow to is {@link #recommendedBytes} of it, capped by
 * {@code remount.maxSize} and by the container's memory limit. A count above
 * {@link JobShape#MAX_RANKS} is sized as that many: a container that claims more gets the caps.
 *
 * <pre>{@code
 * ContainerShmPolicy.Sizing s = new ContainerShmPolicy(SizeSpec.ofPercent(50)).size(4, 64L << 20, null, ram);
 * s.enough();       // false: 64 MB is below the 195 MB four GPUs need
 * s.targetBytes();  // 1 GiB
 * }</pre>
 */
public record ContainerShmPolicy(SizeSpec max) {
  private static final long GIB = 1L << 30;

  public ContainerShmPolicy {
    Objects.requireNonNull(max, "max");
  }

  /**
   * What a container with {@code gpus} GPUs needs and should have.
   *
   * @param needBytes NCCL's worst case for the GPUs: below it NCCL can fail at init
   * @param targetBytes the size to grow to (the recommendation within the caps); the current size when enough
   * @param enough the current size already holds the need: leave it alone
   * @param fits the target holds the need (false when a cap keeps it below)
   * @param reason in words, for the journal and the reply
   */
  public record Sizing(int gpus, long needBytes, long targetBytes, boolean enough, boolean fits, String reason) {}

  /**
   * @param gpus the GPUs the container asks for, at least 1
   * @param sizeBytes its /dev/shm's size now
   * @param memoryLimitBytes its cgroup's memory limit, or null when it has none
   */
  public Sizing size(int gpus, long sizeBytes, Long memoryLimitBytes, long ramBytes) {
    if (gpus < 1) {
      throw new IllegalArgumentException("gpus must be at least 1, not " + gpus);
    }
    int sized = Math.min(gpus, JobShape.MAX_RANKS);
    long need = needBytes(sized);
    String asked = Counts.of(gpus, "GPU") + (sized < gpus ? " (sized as " + sized + ", the most counted)" : "");
    if (sizeBytes >= need) {
      return new Sizing(gpus, need, sizeBytes, true, true, "its /dev/shm of " + Bytes.human(sizeBytes)
          + " is already enough for " + asked + " (NCCL needs up to " + Bytes.human(need) + "); left as it is");
    }
    long target = recommendedBytes(need);
    String why = "";
    long cap = max.resolve(ramBytes) / RemountPolicy.PAGE * RemountPolicy.PAGE;
    if (target > cap) {
      why = ", capped by remount.maxSize (" + max + ")";
      target = cap;
    }
    if (memoryLimitBytes != null && target > memoryLimitBytes / RemountPolicy.PAGE * RemountPolicy.PAGE) {
      target = memoryLimitBytes / RemountPolicy.PAGE * RemountPolicy.PAGE;
      why = ", capped by the container's memory limit (" + Bytes.human(memoryLimitBytes) + ")";
    }
    boolean fits = target >= need;
    return new Sizing(gpus, need, target, false, fits, asked + " need up to " + Bytes.human(need) + " of /dev/shm, it has "
        + Bytes.human(sizeBytes) + ": size " + Bytes.human(target) + why + (fits ? "" : ", still short of the need"));
  }

  /** NCCL's worst case in /dev/shm for {@code ranks} local ranks (the largest figures known, no P2P). */
  public static long needBytes(int ranks) {
    NcclJob one = NcclJob.singleNode(ranks, NcclFacts.LARGEST_KNOWN);
    return Math.max(NcclFootprint.of(one).totalBytes(), NcclFootprint.of(one.withMultiNode(true)).totalBytes());
  }

  /** A size to grow to for a need: twice it, in whole GiB, at least 1 GiB (doctor's fixes say the same). */
  public static long recommendedBytes(long needBytes) {
    long twice = 2 * needBytes;
    return Math.max(GIB, (twice + GIB - 1) / GIB * GIB);
  }
}
