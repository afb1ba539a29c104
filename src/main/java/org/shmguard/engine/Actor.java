package org.shmguard.engine;

import java.util.List;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Action;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.RemountOutcome;

/**
 * The act stage of an {@link Engine}: carries out the actions of a plan that change the host and
 * says what came of each, as data. The engine's own is {@link Acts} (the reaper, and the
 * remounter when the daemon has one); a new remedy is one more method here and in {@code Acts}.
 */
public interface Actor {
  /**
   * Carries out a planned reap: the confirming /proc pass, then per candidate the identity
   * re-check and the lease before the unlink. One outcome per candidate.
   */
  List<ReapOutcome> reap(Action.Reap reap);

  /**
   * Carries out an exit pass's reap ({@link Engine#exitPass}): the same checks, in the same order,
   * except that the confirming pass reads every fd table and no maps (each mapping of a file
   * refuses the write lease, the last check). An act stage without a lighter pass confirms as for
   * {@link #reap}, which is never less safe.
   */
  default List<ReapOutcome> reapOnExit(Action.Reap reap) {
    return reap(reap);
  }

  /**
   * Grows {@code mount} to {@code sizeBytes}, or (null) the configured target, as the remount
   * policy allows; null when this act stage does not remount (a daemon started without a remounter).
   */
  RemountOutcome remount(ShmMount mount, Long sizeBytes, String trigger);
}
