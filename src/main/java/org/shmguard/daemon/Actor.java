package org.shmguard.daemon;

import org.shmguard.policy.Action;

/**
 * The act stage for a {@link org.shmguard.policy.Plan}: carries out one action. Every effect a
 * plan has beyond the pass itself goes through here (alerts, advice, remounts), so a new kind of
 * action is one record in {@link Action} and one branch in the daemon's {@link Acts}. Outcomes
 * come back as data: a remount's {@link org.shmguard.remedy.RemountOutcome} goes to whoever the
 * remounter tells (the alert sink and the metrics).
 */
@FunctionalInterface
interface Actor {
  void carry(Action action);
}
