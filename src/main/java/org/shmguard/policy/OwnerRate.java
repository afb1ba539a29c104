package org.shmguard.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * How often events about one owner's own files are said: at most one per owner uid per
 * {@link #INTERVAL}; the others are counted, and the next one said tells how many were not. A
 * user who makes thousands of such files raises one line every few minutes, not thousands. Time
 * comes in with each pass's snapshot; no clock of its own.
 *
 * <pre>{@code
 * OwnerRate.Turn t = rate.next(uid, snapshot.takenAt());
 * if (t.say()) { raise(..., t.unsaid()); }
 * }</pre>
 */
final class OwnerRate {
  /** The least time between two events about one owner's files. */
  static final Duration INTERVAL = Duration.ofMinutes(5);
  /** How long an owner's count of events not said is kept waiting for its next event. */
  static final Duration FORGOTTEN = Duration.ofHours(1);

  /** Whether to say this one, and how many of the owner's were not said since the last that was. */
  record Turn(boolean say, long unsaid) {}

  private record Said(Instant at, long unsaid) {}

  private final Map<Long, Said> owners = new HashMap<>();

  Turn next(long uid, Instant now) {
    Said last = owners.get(uid);
    if (last != null && Duration.between(last.at(), now).compareTo(INTERVAL) < 0) {
      owners.put(uid, new Said(last.at(), last.unsaid() + 1));
      return new Turn(false, 0);
    }
    owners.put(uid, new Said(now, 0));
    return new Turn(true, last == null ? 0 : last.unsaid());
  }

  /**
   * Forgets owners last said more than an interval before {@code now} with nothing left unsaid,
   * and any last said more than {@link #FORGOTTEN} ago (their count is then never told): what is
   * kept is bounded by the owners heard from within that time.
   */
  void forget(Instant now) {
    owners.values().removeIf(s -> Duration.between(s.at(), now).compareTo(s.unsaid() == 0 ? INTERVAL : FORGOTTEN) >= 0);
  }
}
