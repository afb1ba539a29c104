package org.shmguard.policy;

import java.time.Duration;
import java.util.List;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;

/**
 * The verdict on one segment with the evidence behind it.
 *
 * @param age time since the segment last changed (mtime or ctime), at the snapshot
 * @param lastHolders processes seen holding it in earlier passes (the daemon's memory), if any
 * @param family the segment family its name belongs to ({@code SegmentFamily#name()}), or null
 * @param grace the grace its family gets: unheld, it counts as leaked once {@code age} reaches it
 * @param mayReap whether a leaked verdict may become a reap: a pattern allows its name, its family's
 *     configuration turns reaping on, or its creator is provably dead
 */
public record Assessment(
    Segment segment,
    ShmMount mount,
    Verdict verdict,
    String reason,
    String kind,
    List<HolderRef> holders,
    Duration age,
    List<ProcessInfo> lastHolders,
    String family,
    Duration grace,
    boolean mayReap,
    String formerContainer) {

  /**
   * @param formerContainer the container last seen showing this file's volume at /dev/shm, where the
   *     mount no longer names one (it ended); null otherwise
   */
  public Assessment(Segment segment, ShmMount mount, Verdict verdict, String reason, String kind, List<HolderRef> holders,
      Duration age, List<ProcessInfo> lastHolders, String family, Duration grace, boolean mayReap) {
    this(segment, mount, verdict, reason, kind, holders, age, lastHolders, family, grace, mayReap, null);
  }

  public Assessment {
    holders = List.copyOf(holders);
    lastHolders = List.copyOf(lastHolders);
    java.util.Objects.requireNonNull(grace, "grace");
  }

  /** An assessment of a file no family claims, that may be reaped once leaked, with a 2-minute grace (fixtures). */
  public Assessment(Segment segment, ShmMount mount, Verdict verdict, String reason, String kind, List<HolderRef> holders,
      Duration age, List<ProcessInfo> lastHolders) {
    this(segment, mount, verdict, reason, kind, holders, age, lastHolders, null, Duration.ofMinutes(2), true);
  }
}
