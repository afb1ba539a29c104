package org.shmguard.daemon;

/**
 * How much of the daemon's time passes that events ask for may take: a bucket of pass time that
 * fills at a third of the wall clock, up to {@link #BURST_NANOS}, and that each such pass empties by its
 * length. While the bucket has time in it, passes run back to back (a burst of NCCL segments is
 * reaped as it comes); once it is spent, the next pass waits until it is refilled (twice the
 * length of the pass before it, in the steady state), so a user who keeps a crowded mount
 * changing holds the daemon in passes a third of the time, not all of it.
 * Pure: time comes in as {@code System.nanoTime()} values.
 *
 * <pre>{@code
 * budget.spent(took, now);
 * long notBefore = budget.nextAt(now);
 * }</pre>
 */
final class PassBudget {
  /** The most pass time that may run back to back. */
  static final long BURST_NANOS = 2_000_000_000L;
  /** The longest a pass waits: a pass of minutes, whatever made it so, still leaves room for the next. */
  static final long MAX_WAIT_NANOS = 10_000_000_000L;
  private long tokens = BURST_NANOS;
  private long updatedAt = Long.MIN_VALUE;

  /** A pass that took {@code took} nanoseconds ended at {@code now}. */
  void spent(long took, long now) {
    refill(now);
    tokens -= took;
  }

  /** The soonest the next event pass may run, as a {@code System.nanoTime()} value. */
  long nextAt(long now) {
    refill(now);
    if (tokens >= 0) {
      return now;
    }
    return now + Math.min(MAX_WAIT_NANOS, -tokens * 3); // refilled at a third of the wall clock
  }

  private void refill(long now) {
    if (updatedAt != Long.MIN_VALUE && now > updatedAt) {
      tokens = Math.min(BURST_NANOS, tokens + (now - updatedAt) / 3);
    }
    updatedAt = now;
  }
}
