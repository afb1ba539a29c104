package org.shmguard.policy;

/**
 * What the act stage did with one candidate of a {@link Action.Reap}, as the decide stage reads
 * it (remedy's {@code ReapOutcome} is one): the alerts about a pass's reaps are planned from these.
 */
public interface ReapResult {
  Assessment candidate();

  /** Why: the evidence for a reap, or what stopped it. */
  String detail();

  /** The file was unlinked. */
  boolean reaped();

  /** A dry run: the file passed every check, and was left in place. */
  boolean wouldReap();

  /** Something went wrong on the way (an I/O error, a put-back that failed). */
  boolean failed();

  /**
   * A skip that leaves a leak in place because shmguard could not check it, which an operator
   * should hear of; false for skips where the segment is no longer what was judged.
   */
  boolean leftLeaked();
}
