package org.shmguard.advice;

import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.shmguard.config.Config;
import org.shmguard.policy.Health;
import org.shmguard.policy.Judgement;

/**
 * The daemon's answer to {@code CHECK v1}: the verdict {@code shmguard check} gives (one rule,
 * {@link Health}), worked out from the daemon's latest pass instead of a pass of its own, and how
 * old that pass is. A pass older than {@link Health#staleAfter} makes the verdict unknown: a
 * daemon whose passes stopped must not report a healthy host.
 *
 * <pre>{@code
 * SHMGUARD_HEALTH=problem
 * SHMGUARD_LINE=/dev/shm 95% full (critical 90%)
 * SHMGUARD_FULL=/dev/shm 95% full (critical 90%)
 * SHMGUARD_PASS_AGE_SECONDS=3
 * SHMGUARD_STALE_AFTER_SECONDS=120
 * }</pre>
 *
 * SHMGUARD_FULL, SHMGUARD_LEAK and SHMGUARD_BLIND appear only for the problems found, SHMGUARD_STALE
 * (why) only when the last pass is too old, SHMGUARD_PASS_AGE_SECONDS only once a pass finished.
 * SHMGUARD_OWNER_FULL and SHMGUARD_OWNER_LEAK say the same of mounts that are their owners'
 * ({@link org.shmguard.policy.HealthScope}), naming the owner's uid; they never make the verdict a
 * problem.
 */
public final class HealthAnswer {
  private final int criticalPercent;
  private final boolean dryRun;
  private final Duration staleAfter;
  private final Clock clock;

  public HealthAnswer(int criticalPercent, boolean dryRun, Duration staleAfter, Clock clock) {
    if (staleAfter.isNegative() || staleAfter.isZero()) {
      throw new IllegalArgumentException("staleAfter must be positive, not " + staleAfter);
    }
    this.criticalPercent = criticalPercent;
    this.dryRun = dryRun;
    this.staleAfter = staleAfter;
    this.clock = clock;
  }

  /** The daemon's own thresholds: capacity.critical, reap.dryRun, and staleness from daemon.interval. */
  public static HealthAnswer of(Config config) {
    return new HealthAnswer(config.capacity().critical(), config.reap().dryRun(),
        Health.staleAfter(config.daemon().interval()), Clock.systemUTC());
  }

  /** The reply body for the latest judgement (null before the first pass). */
  String body(Judgement latest) {
    Long age = latest == null ? null : ageSeconds(latest, clock);
    Health h;
    String stale = null;
    if (latest == null) {
      h = Health.unknown("shmguard has not finished its first pass yet");
    } else if (stale(latest, clock, staleAfter)) {
      stale = "its last pass began " + age + "s ago (limit " + staleAfter.toSeconds() + "s)";
      h = Health.unknown("stale: " + stale);
    } else {
      h = Health.of(latest, criticalPercent, dryRun);
    }
    StringBuilder sb = new StringBuilder();
    line(sb, "SHMGUARD_HEALTH", h.status().name().toLowerCase(Locale.ROOT));
    line(sb, "SHMGUARD_LINE", h.line());
    for (Map.Entry<Health.Problem, String> p : h.problems().entrySet()) {
      line(sb, "SHMGUARD_" + p.getKey().name(), p.getValue());
    }
    for (Map.Entry<Health.Problem, String> p : h.owners().entrySet()) {
      line(sb, "SHMGUARD_OWNER_" + p.getKey().name(), p.getValue());
    }
    if (stale != null) {
      line(sb, "SHMGUARD_STALE", stale);
    }
    if (age != null) {
      line(sb, "SHMGUARD_PASS_AGE_SECONDS", Long.toString(age));
    }
    line(sb, "SHMGUARD_STALE_AFTER_SECONDS", Long.toString(staleAfter.toSeconds()));
    return sb.toString();
  }

  /** Whole seconds since {@code j}'s pass began. */
  static long ageSeconds(Judgement j, Clock clock) {
    return Math.max(0, Duration.between(j.snapshot().takenAt(), clock.instant()).toSeconds());
  }

  /** Whether {@code j}'s pass began longer than {@code staleAfter} ago: CHECK and SCAN say so alike. */
  static boolean stale(Judgement j, Clock clock, Duration staleAfter) {
    return ageSeconds(j, clock) > staleAfter.toSeconds();
  }

  private static void line(StringBuilder sb, String key, String value) {
    sb.append(key).append('=').append(AdviceFormat.printable(value)).append('\n');
  }
}
