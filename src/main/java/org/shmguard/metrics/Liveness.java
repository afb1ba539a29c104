package org.shmguard.metrics;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.shmguard.policy.Health;

/**
 * The daemon's health as probes on the metrics port read it, from when its last pass completed.
 * Liveness ({@code GET /}): 200 while passes keep completing, 503 once none has for
 * {@code stuckAfter} (a loop that is stuck, not merely slow), so that Kubernetes restarts a daemon
 * that stopped working; before the first pass it allows {@code stuckAfter} from start. Readiness
 * ({@code GET /readyz}): 503 until the first pass has completed and again once the last one is
 * older than {@code lateAfter}, which is shorter: passes stopped, for whatever reason, so the pod
 * is reported not ready (and a rolling update waits) before it is restarted.
 */
final class Liveness {
  private final Duration stuckAfter;
  private final Duration lateAfter;
  private final LongSupplier nanoClock;
  private final long startNanos;
  private volatile long lastPassNanos;
  private volatile boolean anyPass;

  Liveness(Duration stuckAfter, Duration lateAfter, LongSupplier nanoClock) {
    if (lateAfter.compareTo(stuckAfter) > 0) {
      throw new IllegalArgumentException("readiness must fail no later than liveness: " + lateAfter + " > " + stuckAfter);
    }
    this.stuckAfter = stuckAfter;
    this.lateAfter = lateAfter;
    this.nanoClock = nanoClock;
    this.startNanos = nanoClock.getAsLong();
    this.lastPassNanos = startNanos;
  }

  /**
   * Liveness: twice the interval plus a minute ({@link Health#staleAfter}, the same limit past which
   * the CHECK answer is stale), so slow passes on a loaded host are not failures.
   * Readiness: twice the interval plus 10 s, one missed sweep and a slow pass (a pass takes
   * milliseconds; every interval brings one even when no event came).
   */
  static Liveness forInterval(Duration interval) {
    return new Liveness(Health.staleAfter(interval), interval.multipliedBy(2).plusSeconds(10), System::nanoTime);
  }

  void passCompleted() {
    lastPassNanos = nanoClock.getAsLong();
    anyPass = true;
  }

  boolean alive() {
    return nanoClock.getAsLong() - lastPassNanos <= stuckAfter.toNanos();
  }

  boolean ready() {
    return anyPass && nanoClock.getAsLong() - lastPassNanos <= lateAfter.toNanos();
  }

  /** The answer to {@code GET /}: a few bytes worked out from one clock read, never waiting on anything. */
  HttpReply answer() {
    long ageSeconds = secondsSince(lastPassNanos);
    boolean ok = alive();
    return HttpReply.text(ok ? 200 : 503, ok ? "ok: last pass " + ageSeconds + "s ago\n"
        : "stuck: no pass completed for " + ageSeconds + "s (limit " + stuckAfter.toSeconds() + "s)\n");
  }

  /** The answer to {@code GET /readyz}, as cheap as {@link #answer()}. */
  HttpReply readiness() {
    if (!anyPass) {
      return HttpReply.text(503, "not ready: no pass completed yet (started " + secondsSince(startNanos) + "s ago)\n");
    }
    long ageSeconds = secondsSince(lastPassNanos);
    return ready() ? HttpReply.text(200, "ready: last pass " + ageSeconds + "s ago\n")
        : HttpReply.text(503, "not ready: no pass completed for " + ageSeconds + "s (limit " + lateAfter.toSeconds() + "s)\n");
  }

  private long secondsSince(long nanos) {
    return Duration.ofNanos(nanoClock.getAsLong() - nanos).toSeconds();
  }
}
