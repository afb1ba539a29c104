package org.shmguard.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.model.Dev;

/**
 * The capacity level of every mount across passes, and the changes of level a pass brings: the
 * alerts. Immutable and pure: each pass makes the next one from the judgement's mount reports.
 * A mount first seen at OK raises nothing; a mount that goes away is forgotten.
 *
 * <pre>{@code
 * CapacityWatch.Step step = watch.next(judgement.mounts());
 * step.changes().forEach(alert);  watch = step.watch();
 * }</pre>
 */
public final class CapacityWatch {
  private final CapacityPolicy policy;
  private final Map<Dev, CapacityLevel> levels;

  private CapacityWatch(CapacityPolicy policy, Map<Dev, CapacityLevel> levels) {
    this.policy = policy;
    this.levels = levels;
  }

  /** The same levels judged from now on by {@code newPolicy} (a reloaded configuration): no mount starts over. */
  public CapacityWatch withPolicy(CapacityPolicy newPolicy) {
    return new CapacityWatch(newPolicy, levels);
  }

  public static CapacityWatch start(CapacityPolicy policy) {
    return new CapacityWatch(policy, Map.of());
  }

  /** A mount's level moving from {@code from} to {@code to}, with the report that moved it. */
  public record Change(MountReport report, CapacityLevel from, CapacityLevel to, double usedPercent) {}

  /** The watch after a pass, and the changes that pass brought. */
  public record Step(CapacityWatch watch, List<Change> changes) {
    public Step {
      changes = List.copyOf(changes);
    }
  }

  public Step next(List<MountReport> reports) {
    Map<Dev, CapacityLevel> now = new HashMap<>();
    List<Change> changes = new ArrayList<>();
    for (MountReport r : reports) {
      var usage = r.mount().usage();
      Dev dev = r.mount().dev();
      CapacityLevel before = levels.getOrDefault(dev, CapacityLevel.OK);
      if (usage == null || usage.sizeBytes() <= 0) {
        now.put(dev, before); // not measured this time: keep what we knew
        continue;
      }
      double pct = 100.0 * usage.usedFraction();
      CapacityLevel after = policy.next(before, pct);
      now.put(dev, after);
      if (after != before) {
        changes.add(new Change(r, before, after, pct));
      }
    }
    return new Step(new CapacityWatch(policy, Map.copyOf(now)), changes);
  }

  public CapacityLevel level(Dev dev) {
    return levels.getOrDefault(dev, CapacityLevel.OK);
  }
}
