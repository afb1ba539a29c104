package org.shmguard.policy;

import java.util.List;

/**
 * What the act stage should reap, and why it may not reap at all.
 *
 * @param blockers reasons nothing may be reaped now (an incomplete pass, a foreign PID namespace);
 *     when non-empty, candidates is empty
 */
public record ReapPlan(List<Assessment> candidates, List<String> blockers) {
  public ReapPlan {
    candidates = List.copyOf(candidates);
    blockers = List.copyOf(blockers);
    if (!blockers.isEmpty() && !candidates.isEmpty()) {
      throw new IllegalArgumentException("a blocked plan has no candidates");
    }
  }

  public boolean isEmpty() {
    return candidates.isEmpty();
  }
}
