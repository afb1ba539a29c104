package org.shmguard.remedy;

import org.shmguard.policy.Assessment;
import org.shmguard.policy.ReapResult;

/** What happened to one candidate of a reap plan, with the evidence it was judged on. */
public record ReapOutcome(Assessment candidate, Result result, String detail) implements ReapResult {
  /** How a skip begins when the confirming pass could not read every process. */
  static final String INCOMPLETE_PASS = "the confirming /proc pass was incomplete";
  /** How a skip begins when the kernel would not consider a lease (no CAP_LEASE, fs.leases-enable=0). */
  static final String NO_LEASES = "leases are unavailable";
  /** How a skip begins when some mount namespace's mounts could not be read (a bind mount of the file not ruled out). */
  static final String MOUNTS_UNREAD = "cannot rule out that it is mounted elsewhere";

  /**
   * True for a skip that leaves a leak in place because shmguard could not check it, which an
   * operator should hear of; false for skips where the segment is no longer what was judged
   * (gone, changed, held again, open elsewhere).
   */
  @Override
  public boolean leftLeaked() {
    return result == Result.SKIPPED && (detail.startsWith(INCOMPLETE_PASS) || detail.startsWith(NO_LEASES)
        || detail.startsWith(MOUNTS_UNREAD));
  }

  @Override
  public boolean reaped() {
    return result == Result.REAPED;
  }

  @Override
  public boolean wouldReap() {
    return result == Result.WOULD_REAP;
  }

  @Override
  public boolean failed() {
    return result == Result.FAILED;
  }

  public enum Result {
    REAPED("reaped"),
    WOULD_REAP("would-reap"),
    SKIPPED("skipped"),
    FAILED("failed");

    private final String label;

    Result(String label) {
      this.label = label;
    }

    public String label() {
      return label;
    }
  }
}
