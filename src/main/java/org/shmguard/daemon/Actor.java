package org.shmguard.daemon;

import java.util.List;
import org.shmguard.policy.Action;
import org.shmguard.remedy.ReapOutcome;

/**
 * The act stage for a {@link org.shmguard.policy.Plan}: carries out one action. Every effect a
 * plan has goes through here (reaps, alerts, advice, remounts), so a new kind of action is one
 * record in {@link Action} and one branch in the daemon's {@link Acts}. Outcomes come back as
 * data: a reap's {@link ReapOutcome}s are returned (the planner turns them into alerts, the
 * metrics count them); a remount's {@link org.shmguard.remedy.RemountOutcome} goes to whoever the
 * remounter tells (the alert sink and the metrics).
 */
@FunctionalInterface
interface Actor {
  /** Carries out {@code action}; the outcomes of a {@link Action.Reap}, none for any other action. */
  List<ReapOutcome> carry(Action action);
}
