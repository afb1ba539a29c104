package org.shmguard.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;

/**
 * The daemon's decide stage after each pass: from the pass's judgement, what earlier passes saw
 * and the policies, a {@link Plan}. Capacity levels with hysteresis (one state machine, which
 * both the capacity alerts and the remount trigger follow), each failed NCCL allocation once, a
 * crowded mount once, fresh advice, a remount for a mount that has just become critical, and
 * when a segment leaves its grace. No I/O and no clock of its own; one thread asks (the daemon's
 * worker), since it remembers what it raised.
 *
 * <pre>{@code
 * Planner planner = new Planner(reapPolicy, remountPolicy, capacityPolicy, 3);
 * Plan plan = planner.next(pass.judgement());
 * }</pre>
 */
public final class Planner {
  /** What a remount on the capacity path gives as its reason. */
  public static final String CRITICAL_TRIGGER = "it passed the critical threshold";

  private final ReapPolicy reap;
  private final RemountPolicy remount;
  private final CapacityAlerts capacity;
  private final FileCountAlerts files = new FileCountAlerts();

  /** @param topHolders how many holders of hidden bytes a capacity event names */
  public Planner(ReapPolicy reap, RemountPolicy remount, CapacityPolicy capacity, int topHolders) {
    this.reap = reap;
    this.remount = remount;
    this.capacity = new CapacityAlerts(capacity, topHolders);
  }

  public Plan next(Judgement j) {
    List<Action> actions = new ArrayList<>();
    List<CapacityWatch.Change> changes = capacity.report(j, a -> actions.add(new Action.Raise(a)));
    files.report(j.snapshot(), a -> actions.add(new Action.Raise(a)));
    actions.add(new Action.Advise(j));
    for (CapacityWatch.Change c : changes) {
      if (remount.triggeredBy(c)) {
        actions.add(new Action.Remount(c.report().mount(), CRITICAL_TRIGGER));
      }
    }
    return new Plan(actions, graceEndsIn(j));
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
