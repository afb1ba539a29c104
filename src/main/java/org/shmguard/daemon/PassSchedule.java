package org.shmguard.daemon;

import java.time.Duration;

/**
 * When the daemon's next full pass is due: every timing rule of the worker loop in one place, a
 * pure state machine whose clock comes in as {@code System.nanoTime()} values. Events say what
 * happened ({@link #event}, {@link #exitLeftWork}, {@link #request}, ...), {@link #isDue} says
 * whether a pass runs now, {@link #waitNanos} how long the loop may sleep, and {@link #passStarts}
 * / {@link #passEnded} close the circle.
 *
 * <pre>{@code
 * PassSchedule s = new PassSchedule(settleNanos);
 * s.event(now);                       // an inotify event: a pass once things settle
 * if (s.isDue(now)) { boolean rediscover = s.passStarts(); ...; s.passEnded(end, took, more, lookAgainIn); }
 * }</pre>
 *
 * <p>The rules:
 * <ul>
 *   <li>An event (inotify, a heartbeat's change) asks for a pass once {@code settle} has passed
 *       since the first one, and such passes are spaced by a {@link PassBudget} once two seconds of
 *       them have run back to back. A request (the sweep, a rediscovery that found a change, a
 *       reload) does not wait for the budget.
 *   <li>A holder's exit that the exit path handled completely brings a full pass once exits have
 *       been quiet for {@link #EXIT_QUIET_NANOS}, at most {@link #EXIT_MOST_DEFERRED_NANOS} after the
 *       first; one that left work brings it at once.
 *   <li>A segment leaving its grace brings a pass then (at least {@link #GRACE_MIN_WAIT_NANOS} on),
 *       spaced by the budget.
 *   <li>Exited holders still listed in /proc (zombies) bring passes from {@link #ZOMBIE_RETRY_START_NANOS},
 *       doubling up to {@link #ZOMBIE_RETRY_MAX_NANOS}.
 *   <li>Mounts are discovered again for every pass but one that only exits asked for.
 * </ul>
 */
final class PassSchedule {
  /** How long exits must have been quiet before the full pass that follows the exit path's reaps. */
  static final long EXIT_QUIET_NANOS = 500_000_000L;
  /** The longest that pass waits after the first exit it follows. */
  static final long EXIT_MOST_DEFERRED_NANOS = 5_000_000_000L;
  /** The least wait for a grace's end: a segment at the edge of its grace is not judged in a loop. */
  static final long GRACE_MIN_WAIT_NANOS = Duration.ofMillis(50).toNanos();
  static final long ZOMBIE_RETRY_START_NANOS = Duration.ofMillis(20).toNanos();
  static final long ZOMBIE_RETRY_MAX_NANOS = Duration.ofSeconds(1).toNanos();

  /** No such time: {@code System.nanoTime()} has an arbitrary origin, so any other value may be a time. */
  private static final long NONE = Long.MIN_VALUE;
  private final long settleNanos;
  private final PassBudget budget = new PassBudget();
  /** When the first event that is still waiting for its pass came (less the settle when it needs none). */
  private long pendingSince = NONE;
  /** Whether a request is among what made the pending pass due: it does not wait for the budget. */
  private boolean requested;
  /** The soonest an event-triggered pass may run (the budget). */
  private long eventsNotBefore = NONE;
  private long retryAt = NONE;
  private long retryGap = ZOMBIE_RETRY_START_NANOS;
  /** When the first unheld segment now in its grace becomes reapable. */
  private long graceEndsAt = NONE;
  /** When the full pass that follows the exit path's reaps is due. */
  private long exitFollowUpAt = NONE;
  private long firstDeferredExit = NONE;
  /** Whether anything but a holder's exit asked for a pass since the last one. */
  private boolean rediscover = true;

  /** @param settleNanos how long events settle before their pass ({@code daemon.settle}) */
  PassSchedule(long settleNanos) {
    this.settleNanos = settleNanos;
  }

  /** Something changed on a mount (an inotify event, a heartbeat's finding) at {@code at}: a pass once it settles. */
  void event(long at) {
    rediscover = true;
    pendingAt(at);
  }

  /** Events on the watched mounts at {@code now}: the exit path's own unlinks wait for the pass that follows it. */
  void mountEvents(long now) {
    if (exitFollowUpAt != NONE) {
      rediscover = true; // the pass already due after the exit path sees them all
    } else {
      event(now);
    }
  }

  /** A sweep, a rediscovery that found a change or an ended container, a reload: a pass now, past the budget. */
  void request(long now) {
    event(now - settleNanos);
    requested = true;
  }

  /** Mounts must be discovered afresh for the next pass, which comes as it would. */
  void rediscoverNext() {
    rediscover = true;
  }

  /** A holder exited and the exit path left work, or did not run: a pass at once, on the same mounts. */
  void exitLeftWork(long now) {
    pendingAt(now - settleNanos);
  }

  /** A holder exited and the exit path did all there was: a pass once exits are quiet. */
  void exitHandled(long now) {
    if (firstDeferredExit == NONE) {
      firstDeferredExit = now;
    }
    exitFollowUpAt = Math.min(firstDeferredExit + EXIT_MOST_DEFERRED_NANOS, now + EXIT_QUIET_NANOS);
  }

  /** Whether a full pass is due at {@code now}. */
  boolean isDue(long now) {
    boolean settled = pendingSince != NONE && now - pendingSince >= settleNanos && (requested || now >= eventsNotBefore);
    boolean retry = retryAt != NONE && now >= retryAt;
    boolean graceOver = graceEndsAt != NONE && now >= Math.max(graceEndsAt, eventsNotBefore);
    boolean exitFollowUp = exitFollowUpAt != NONE && now >= exitFollowUpAt;
    return settled || retry || graceOver || exitFollowUp;
  }

  /** How long the loop may wait from {@code now} before something is due; {@link Long#MAX_VALUE} for nothing. */
  long waitNanos(long now) {
    long wait = Long.MAX_VALUE;
    if (pendingSince != NONE) {
      long at = pendingSince + settleNanos;
      if (!requested && eventsNotBefore != NONE && eventsNotBefore > at) {
        at = eventsNotBefore;
      }
      wait = Math.min(wait, at - now);
    }
    if (retryAt != NONE) {
      wait = Math.min(wait, retryAt - now);
    }
    if (exitFollowUpAt != NONE) {
      wait = Math.min(wait, exitFollowUpAt - now);
    }
    if (graceEndsAt != NONE) {
      wait = Math.min(wait, Math.max(graceEndsAt, eventsNotBefore) - now);
    }
    return wait == Long.MAX_VALUE ? wait : Math.max(0, wait);
  }

  /** A pass starts: what was due is being served. True when it must discover the mounts afresh. */
  boolean passStarts() {
    pendingSince = NONE;
    retryAt = NONE;
    exitFollowUpAt = NONE;
    graceEndsAt = NONE;
    requested = false;
    return rediscover;
  }

  /**
   * A pass ran to its end at {@code end}, taking {@code tookNanos}.
   *
   * @param moreToExamine it reaped and left files unexamined: the next batch at once
   * @param lookAgainIn when its first segment in grace leaves it; null for none
   */
  void passEnded(long end, long tookNanos, boolean moreToExamine, Duration lookAgainIn) {
    rediscover = false;
    firstDeferredExit = NONE;
    budget.spent(tookNanos, end);
    eventsNotBefore = budget.nextAt(end);
    if (moreToExamine) {
      pendingAt(end - settleNanos);
    }
    graceEndsAt = lookAgainIn == null ? NONE : end + Math.max(GRACE_MIN_WAIT_NANOS, lookAgainIn.toNanos());
  }

  /** After a pass at {@code now}: whether exited holders are still listed (zombies), for a retry with backoff. */
  void zombies(long now, boolean any) {
    if (!any) {
      retryGap = ZOMBIE_RETRY_START_NANOS;
      return;
    }
    retryAt = now + retryGap;
    retryGap = Math.min(ZOMBIE_RETRY_MAX_NANOS, retryGap * 2);
  }

  private void pendingAt(long at) {
    if (pendingSince == NONE || at < pendingSince) {
      pendingSince = at;
    }
  }
}
