package org.shmguard.engine;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.shmguard.alert.Alert;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.RemountOutcome;

/**
 * What one pass found and did, as one immutable value: its judgement, the plan made from it, the
 * outcome of every action carried out, and every alert the pass raised, in order. Every
 * {@link Output} (journald, metrics, the advice socket and file, systemd's status) is handed this
 * and nothing else.
 *
 * <pre>{@code
 * PassReport report = engine.pass(false, false);
 * outputs.export(report);
 * }</pre>
 *
 * Alerts raised between passes (the journal summary, a path that stalled, a reload, root's
 * remount) travel as a report of their own with no judgement ({@link #between}), and so do the
 * exit path's reaps ({@link #exitPass}): {@link #kind} tells the three apart.
 *
 * @param judgement the pass's judgement; null for a report made between passes
 * @param plan what was planned from it (its {@link org.shmguard.policy.Action.Reap} carried out
 *     first); null between passes
 * @param outcomes one per candidate of the plan's reap, none when nothing was reaped
 * @param remounts one per remount carried out (planned, or asked for by root)
 * @param alerts every alert to tell, in the order to tell them
 * @param dryRun whether the pass only reported (nothing unlinked or remounted)
 * @param took how long the pass took: observe, judge, plan, and the actions with the reap's confirming pass
 */
public record PassReport(Judgement judgement, Plan plan, List<ReapOutcome> outcomes, List<RemountOutcome> remounts,
    List<Alert> alerts, boolean dryRun, Duration took) {
  public PassReport {
    outcomes = List.copyOf(outcomes);
    remounts = List.copyOf(remounts);
    alerts = List.copyOf(alerts);
    Objects.requireNonNull(took, "took");
    if ((judgement == null) != (plan == null)) {
      throw new IllegalArgumentException("a pass's report has both its judgement and its plan, one between passes neither");
    }
  }

  /** What happened between passes: alerts, and the remounts root asked for. */
  public static PassReport between(List<RemountOutcome> remounts, List<Alert> alerts) {
    return new PassReport(null, null, List.of(), remounts, alerts, false, Duration.ZERO);
  }

  /** One alert between passes. */
  public static PassReport of(Alert alert) {
    return between(List.of(), List.of(alert));
  }

  /**
   * The exit path's report: the files it reaped as their last holders exited, each with its
   * alert, told to the outputs as soon as they are unlinked (not with the next full pass).
   */
  public static PassReport exitPass(List<ReapOutcome> reaped, List<Alert> alerts, Duration took) {
    if (reaped.isEmpty()) {
      throw new IllegalArgumentException("an exit pass's report has the reaps it made");
    }
    return new PassReport(null, null, reaped, List.of(), alerts, false, took);
  }

  /** Which kind of report this is. */
  public enum Kind {
    /** A full pass: observe, judge, plan, act. */
    FULL,
    /** The exit path: reaps judged from the last full pass as holders exited. */
    EXIT,
    /** Alerts and root's remounts between passes. */
    BETWEEN
  }

  public Kind kind() {
    return judgement != null ? Kind.FULL : outcomes.isEmpty() ? Kind.BETWEEN : Kind.EXIT;
  }

  /** True for a full pass's report, false for the exit path's and one made between passes. */
  public boolean isPass() {
    return judgement != null;
  }
}
