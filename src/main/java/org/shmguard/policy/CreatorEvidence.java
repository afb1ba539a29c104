package org.shmguard.policy;

import java.util.List;
import java.util.OptionalInt;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.family.SegmentFamily;

/**
 * Whether the pid a file's name gives for its creator is provably dead: no live process has that
 * pid, or the process that has it now is not the one seen holding the file (another start time).
 * A live pid whose start time shmguard never saw counts as the creator: not proven dead.
 *
 * <p>The pid in a name is the creator's in its own PID namespace. shmguard reads it in its own,
 * so the evidence is taken only on a mount of shmguard's own mount namespace (the host's /dev/shm
 * or a configured path), never on a container's /dev/shm, whose creators number their pids in
 * the container's PID namespace. A creator in a container that shares the host's /dev/shm but
 * not its PID namespace can still name a pid that is absent on the host: the evidence never
 * stands alone, the file must also be unheld by every process over a complete pass and unchanged
 * for its family's grace.
 */
final class CreatorEvidence {
  private CreatorEvidence() {}

  /** Why the creator is provably dead ("its creator, pid 42 (from its name), has exited"), or null. */
  static String deadCreator(SegmentFamily family, String name, ShmMount mount, Snapshot snap, List<ProcessInfo> lastHolders) {
    OptionalInt pid = family == null ? OptionalInt.empty() : family.creatorPid(name);
    if (pid.isEmpty() || !pidsAreOurs(mount)) {
      return null;
    }
    int p = pid.getAsInt();
    if (!snap.isAlive(p)) {
      return "its creator, pid " + p + " (from its name), has exited";
    }
    ProcessInfo now = snap.processes().get(p);
    for (ProcessInfo seen : lastHolders) {
      if (seen.pid() == p && seen.startTicks() >= 0 && now != null && now.startTicks() >= 0
          && now.startTicks() != seen.startTicks()) {
        return "its creator, pid " + p + " (from its name), has exited; that pid now belongs to a later process";
      }
    }
    return null;
  }

  /** What stops the creator evidence, for the reason of a file reported and not reaped ("" when the name has no pid). */
  static String why(SegmentFamily family, String name, ShmMount mount, Snapshot snap) {
    OptionalInt pid = family.creatorPid(name);
    if (pid.isEmpty()) {
      return "";
    }
    if (!pidsAreOurs(mount)) {
      return "; the creator pid " + pid.getAsInt() + " in its name is not one of this PID namespace's";
    }
    return "; its creator, pid " + pid.getAsInt() + " (from its name), is alive";
  }

  private static boolean pidsAreOurs(ShmMount mount) {
    return mount != null && mount.origin() != MountOrigin.NAMESPACE;
  }
}
