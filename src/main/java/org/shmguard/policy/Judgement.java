package org.shmguard.policy;

import java.util.List;
import org.shmguard.model.Snapshot;

/** Everything the decide stage concluded from one snapshot. */
public record Judgement(Snapshot snapshot, List<Assessment> segments, List<MountReport> mounts, ReapPlan plan) {
  public Judgement {
    segments = List.copyOf(segments);
    mounts = List.copyOf(mounts);
  }

  public long count(Verdict verdict) {
    return segments.stream().filter(a -> a.verdict() == verdict).count();
  }
}
