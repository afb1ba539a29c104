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
 */
public record Assessment(
    Segment segment,
    ShmMount mount,
    Verdict verdict,
    String reason,
    String kind,
    List<HolderRef> holders,
    Duration age,
    List<ProcessInfo> lastHolders) {

  public Assessment {
    holders = List.copyOf(holders);
    lastHolders = List.copyOf(lastHolders);
  }
}
