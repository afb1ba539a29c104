package org.shmguard.policy;

import java.time.Duration;
import java.util.List;

/**
 * What the daemon does after one pass, in order, and when it should look again.
 *
 * @param actions for the act stage, in the order they are to be carried out
 * @param lookAgainIn how long until the first segment now in its grace becomes reapable, from the
 *     snapshot's time; null when none is in its grace (the next trigger or sweep will do)
 */
public record Plan(List<Action> actions, Duration lookAgainIn) {
  public Plan {
    actions = List.copyOf(actions);
    if (lookAgainIn != null && lookAgainIn.isNegative()) {
      throw new IllegalArgumentException("lookAgainIn must not be negative: " + lookAgainIn);
    }
  }
}
