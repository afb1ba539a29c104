package org.shmguard.metrics;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Answers a liveness probe on the metrics port ({@code GET /}): 200 while passes keep completing,
 * 503 once none has completed for {@code stale} (a loop that is stuck, not merely slow), so that
 * Kubernetes restarts a daemon that stopped working. Before the first pass it allows
 * {@code stale} from start.
 */
final class Liveness {
  private final Duration stale;
  private final LongSupplier nanoClock;
  private volatile long lastPassNanos;

  Liveness(Duration stale, LongSupplier nanoClock) {
    this.stale = stale;
    this.nanoClock = nanoClock;
    this.lastPassNanos = nanoClock.getAsLong();
  }

  /** Twice the interval plus a minute: slow passes on a loaded host are not failures. */
  static Liveness forInterval(Duration interval) {
    return new Liveness(interval.multipliedBy(2).plusMinutes(1), System::nanoTime);
  }

  void passCompleted() {
    lastPassNanos = nanoClock.getAsLong();
  }

  boolean alive() {
    return nanoClock.getAsLong() - lastPassNanos <= stale.toNanos();
  }

  /** The answer to {@code GET /}: a few bytes worked out from one clock read, never waiting on anything. */
  HttpReply answer() {
    long ageSeconds = Duration.ofNanos(nanoClock.getAsLong() - lastPassNanos).toSeconds();
    boolean ok = alive();
    return HttpReply.text(ok ? 200 : 503, ok ? "ok: last pass " + ageSeconds + "s ago\n"
        : "stuck: no pass completed for " + ageSeconds + "s (limit " + stale.toSeconds() + "s)\n");
  }
}
