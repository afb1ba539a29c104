package org.shmguard.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;

/**
 * The daemon's decide stage after each judgement: from the pass's judgement, what earlier passes
 * saw and the policies, a {@link Plan}. The reap of the segments judged leaked (first, so that
 * it follows the judgement at once), capacity levels with hysteresis (one state machine, which
 * both the capacity alerts and the remount trigger follow), each failed NCCL allocation once, a
 * crowded mount once, fresh advice, a remount for a mount that has just become critical or where
 * an NCCL segment could not be extended (a job needed more room than it had), and
 * when a segment leaves its grace. Once the plan is carried out, {@link #report} plans the
 * alerts about its outcomes (through {@link OutcomeAlerts}, the one place an outcome becomes an
 * alert) and about mounts that came or went. No I/O and no clock of its own; one pass at a time
 * asks (the engine's pass, on one thread), since it remembers what it raised.
 *
 * <pre>{@code
 * Planner planner = new Planner(reapPolicy, remountPolicy, capacityPolicy, 3);
 * Plan plan = planner.next(judgement, dryRun);              // Reap, Raise..., Advise, Remount...
 * ...                                                       // the engine's actor carries Reap, Remount
 * List<Alert> alerts = planner.alerts(judgement, plan, reaps, remounts, stalledPaths);
 * }</pre>
 */
public final class Planner {
  /** What a remount on the capacity path gives as its reason. */
  public static final String CRITICAL_TRIGGER = "it passed the critical threshold";
  /** What a remount after a failed NCCL allocation gives as its reason. */
  public static final String FAILED_ALLOCATION_TRIGGER = "an NCCL segment could not be extended there";

  private ReapPolicy reap;
  private RemountPolicy remount;
  private final CapacityAlerts capacity;
  private final FileCountAlerts files = new FileCountAlerts();
  private final OutcomeAlerts outcomes = new OutcomeAlerts();
  private final MountAlerts mounts = new MountAlerts();

  /** @param topHolders how many holders of hidden bytes a capacity event names */
  public Planner(ReapPolicy reap, RemountPolicy remount, CapacityPolicy capacity, int topHolders) {
    this.reap = reap;
    this.remount = remount;
    this.capacity = new CapacityAlerts(capacity, topHolders);
  }

  /**
   * Plans from now on with these policies (a reloaded configuration), remembering what earlier
   * passes saw: each mount's capacity level, the leaks and mounts already reported. Called between
   * passes, by the thread that plans.
   */
  public void reconfigure(ReapPolicy newReap, RemountPolicy newRemount, CapacityPolicy newCapacity, int topHolders) {
    this.reap = newReap;
    this.remount = newRemount;
    this.capacity.reconfigure(newCapacity, topHolders);
  }

  /**
   * The reap of what {@code j} judged leaked, if anything: one {@link Action.Reap} with every
   * candidate of its {@link ReapPlan}, none when the plan is empty or blocked. The whole plan of a
   * one-shot {@code clean}, and the first action of the daemon's.
   */
  public static List<Action> reaping(Judgement j, boolean dryRun) {
    return j.plan().isEmpty() ? List.of() : List.of(new Action.Reap(j.plan().candidates(), dryRun));
  }

  /** The plan after judgement {@code j}; with {@code dryRun} its reap checks and unlinks nothing. */
  public Plan next(Judgement j, boolean dryRun) {
    List<Action> actions = new ArrayList<>(reaping(j, dryRun));
    List<CapacityWatch.Change> changes = capacity.report(j, remount, a -> actions.add(new Action.Raise(a)));
    files.report(j.snapshot(), a -> actions.add(new Action.Raise(a)));
    actions.add(new Action.Advise(j));
    Set<Dev> growing = new HashSet<>();
    for (CapacityWatch.Change c : changes) {
      if (remount.triggeredBy(c) && growing.add(c.report().mount().dev())) {
        actions.add(new Action.Remount(c.report().mount(), CRITICAL_TRIGGER));
      }
    }
    // A mount shmguard only reports is never grown: a user's own 0-byte nccl-* files there plan nothing.
    for (ShmMount m : capacity.failedAllocations()) {
      if (remount.enabled() && m.mayAct() && growing.add(m.dev())) {
        actions.add(new Action.Remount(m, FAILED_ALLOCATION_TRIGGER));
      }
    }
    return new Plan(actions, graceEndsIn(j));
  }

  /**
   * What operators hear of once the plan's reap was carried out: each mount that came or went
   * since the last pass, then each reap with its evidence, each leak not reaped once, and an
   * incomplete /proc pass once per stretch.
   *
   * @param reaps what the act stage reported for the plan's {@link Action.Reap} (none if it had none)
   * @param stalledPaths paths whose walks have not returned: a mount behind one is gone for now, not for good
   */
  public List<Action> report(Judgement j, List<? extends ReapResult> reaps, Set<String> stalledPaths) {
    List<Action> actions = new ArrayList<>();
    mounts.report(j.snapshot(), stalledPaths, a -> actions.add(new Action.Raise(a)));
    outcomes.report(j, reaps, a -> actions.add(new Action.Raise(a)));
    return actions;
  }

  /**
   * Every alert of a pass, in the order operators hear them: mounts that came or went, the reap's
   * outcomes (both from {@link #report}), the plan's own alerts, then each remount's outcome.
   *
   * @param plan the plan {@link #next} made for {@code j}
   * @param remounts what the act stage reported for the plan's {@link Action.Remount}s
   */
  public List<Alert> alerts(Judgement j, Plan plan, List<? extends ReapResult> reaps,
      List<? extends RemountResult> remounts, Set<String> stalledPaths) {
    List<Alert> alerts = new ArrayList<>();
    for (Action a : report(j, reaps, stalledPaths)) {
      alerts.add(((Action.Raise) a).alert());
    }
    for (Action a : plan.actions()) {
      if (a instanceof Action.Raise r) {
        alerts.add(r.alert());
      }
    }
    remounts.forEach(o -> alerts.add(OutcomeAlerts.remounted(o)));
    return alerts;
  }

  /** The journal summary of the last judgement: one event per mount, with its level and what was reaped so far. */
  public List<Alert> summary(Judgement j, long reapedTotal) {
    List<Alert> alerts = new ArrayList<>();
    for (MountReport r : j.mounts()) {
      var u = r.mount().usage();
      double pct = u == null ? 0 : 100 * u.usedFraction();
      alerts.add(capacity.mountAlert(EventKind.SUMMARY, r, j, pct,
          String.format("summary: %s is %.0f%% full (%s)", r.mount().displayName(), pct,
              capacity.level(r.mount().dev()).label())).with("SHM_REAPED_TOTAL", reapedTotal));
    }
    return alerts;
  }

  /** The soonest that a segment now in its grace leaves it, or null if none is in its grace. */
  private Duration graceEndsIn(Judgement j) {
    Duration soonest = null;
    for (Assessment a : j.segments()) {
      Duration left = reap.graceLeft(a);
      if (left != null && (soonest == null || left.compareTo(soonest) < 0)) {
        soonest = left;
      }
    }
    return soonest;
  }
}
