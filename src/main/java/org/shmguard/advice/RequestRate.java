package org.shmguard.advice;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * How many requests each user may make: a token bucket per user (by the uid SO_PEERCRED gives,
 * root included, each its own), holding at most {@code burst} tokens and refilled at
 * {@code perSecond}. Every connection costs one token before anything is read from it, whatever
 * it asks and whether or not it then gets a slot, so a refusal costs no more than the accept. A
 * user whose bucket is empty is refused until it refills; one stretch of refusals is one
 * {@link Taken#startsStretch()}, ended once the user's bucket has filled again. Used by the
 * acceptor thread alone.
 *
 * <pre>{@code
 * RequestRate rate = new RequestRate(RequestRate.BURST, RequestRate.PER_SECOND);
 * RequestRate.Taken t = rate.take(peer.user(), System.nanoTime());
 * if (!t.admitted()) { ... refuse with "rate-limited" ... }
 * }</pre>
 */
final class RequestRate {
  /** Requests one user may make at once: a node whose 64 jobs start together, twice over. */
  static final int BURST = 128;
  /** Requests one user may make each second, on average, once the burst is spent. */
  static final int PER_SECOND = 16;
  /** Users remembered before those with a full bucket (who lose nothing by being forgotten) are dropped. */
  private static final int PRUNE_AT = 1024;
  /**
   * The most users remembered at all (about 100 bytes each): past it, after pruning, one user is
   * forgotten for each new one, and so starts again with a full bucket. Only someone with
   * thousands of uids (a subordinate uid range) gets that far, and such a user counts as that
   * many users anyway.
   */
  private static final int MAX_USERS = 8192;

  /** The outcome of one request: admitted, or refused and whether this refusal begins a stretch. */
  record Taken(boolean admitted, boolean startsStretch) {
    static final Taken ADMITTED = new Taken(true, false);
    static final Taken REFUSED = new Taken(false, false);
    static final Taken FIRST_REFUSED = new Taken(false, true);
  }

  private static final class Bucket {
    double tokens;
    long last;
    boolean limited;

    Bucket(double tokens, long last) {
      this.tokens = tokens;
      this.last = last;
    }
  }

  private final int burst;
  private final double perNano;
  private final Map<String, Bucket> buckets = new HashMap<>();

  RequestRate(int burst, double perSecond) {
    if (burst < 1 || !(perSecond > 0)) {
      throw new IllegalArgumentException("a request rate needs a burst of at least 1 and a positive rate, not " + burst
          + " and " + perSecond);
    }
    this.burst = burst;
    this.perNano = perSecond / 1e9;
  }

  int burst() {
    return burst;
  }

  double perSecond() {
    return perNano * 1e9;
  }

  /** Takes a token for {@code user} at {@code now} (System.nanoTime), if there is one. */
  Taken take(String user, long now) {
    Bucket b = buckets.get(user);
    if (b == null) {
      if (buckets.size() >= PRUNE_AT) {
        prune(now);
        if (buckets.size() >= MAX_USERS) {
          Iterator<Bucket> any = buckets.values().iterator();
          any.next();
          any.remove();
        }
      }
      b = new Bucket(burst, now);
      buckets.put(user, b);
    } else {
      refill(b, now);
    }
    if (b.limited && b.tokens >= burst) {
      b.limited = false; // quiet long enough to fill up again: that stretch is over
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return Taken.ADMITTED;
    }
    if (b.limited) {
      return Taken.REFUSED;
    }
    b.limited = true;
    return Taken.FIRST_REFUSED;
  }

  private void refill(Bucket b, long now) {
    long elapsed = now - b.last;
    if (elapsed > 0) {
      b.tokens = Math.min(burst, b.tokens + elapsed * perNano);
      b.last = now;
    }
  }

  /** Forgets users whose bucket is full again: a new bucket for them would be the same. */
  private void prune(long now) {
    for (Iterator<Bucket> it = buckets.values().iterator(); it.hasNext(); ) {
      Bucket b = it.next();
      refill(b, now);
      if (b.tokens >= burst) {
        it.remove();
      }
    }
  }

  /** Users remembered now. */
  int users() {
    return buckets.size();
  }
}
