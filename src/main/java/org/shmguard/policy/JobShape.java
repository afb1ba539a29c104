package org.shmguard.policy;


/**
 * What a launcher knows about the job it is about to start; either part may be unknown (null).
 *
 * @param localRanks ranks of the job on this host (one per GPU it uses here)
 * @param nccl the NCCL release the job loads
 */
public record JobShape(Integer localRanks, NcclVersion nccl) {
  public static final int MAX_RANKS = 1024;

  public JobShape {
    if (localRanks != null && (localRanks < 1 || localRanks > MAX_RANKS)) {
      throw new IllegalArgumentException("local ranks must be from 1 to " + MAX_RANKS + ", not " + localRanks);
    }
  }

  public static JobShape unknown() {
    return new JobShape(null, null);
  }
}
