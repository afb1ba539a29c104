package org.shmguard.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.family.SegmentFamily;

/**
 * Whether the creator whose pid a file's name gives (PyTorch's {@code torch_<pid>_*}, SGLang's
 * {@code sgl_shm_*_<pid>_*}) is provably dead, judged in the PID namespace the name was made in,
 * whichever that is: the creator called getpid() in its own PID namespace, which may be a
 * container's that shares the host's /dev/shm ({@code --ipc=host} without {@code --pid=host}).
 *
 * <pre>{@code
 * CreatorEvidence.Finding f = CreatorEvidence.judge(family, segment, mount, snap, lastHolders);
 * f.dead();   // true only with proof
 * }</pre>
 *
 * <p>Every live process that has the name's pid in its own PID namespace ({@code NSpid}) may be
 * the creator, unless one of these proves it is not:
 * <ul>
 *   <li>none of its uids is the file's owner ({@link JobEvidence#mayHaveMade}): it could not have
 *       made the file, so another user's processes never keep a leak that is not theirs;
 *   <li>its mount namespace shows no mount of the file's tmpfs (its mountinfo lists no mount of
 *       that device, at any mount point): it could not have made the file by name;
 *   <li>it started after the file was born (statx btime), by more than {@link #START_SLACK_NANOS};
 *   <li>it is in shmguard's own PID namespace, was not the process seen holding the file with that
 *       pid in the previous pass (another start time): the pid was reused.
 * </ul>
 * The creator is dead only when no live process is left that may be it. A PID namespace with no
 * process left has no live pid at all. Where the lookup missed a process, or did not look the pid
 * up, nothing is proved: the file is kept and the reason says why. This evidence never stands
 * alone: the file must also be unheld by every process over a complete pass and unchanged for its
 * family's grace, and the reaper's lease still refuses any file someone opens.
 */
final class CreatorEvidence {
  /**
   * How much later than the file's birth a process must have started to be excluded: start times
   * come in 10 ms ticks placed on the wall clock through /proc/uptime (10 ms too), so a true
   * creator is never put after its file by rounding. A step of the wall clock forward by more than
   * this between the file's birth and the pass is not allowed for (docs/safety.md).
   */
  static final long START_SLACK_NANOS = 1_000_000_000L;

  private CreatorEvidence() {}

  /** What the creator evidence found: {@code dead} only with proof; {@code why} is the reason's clause. */
  record Finding(boolean dead, String why) {}

  /** The finding for a file whose family's names give a creator pid; null when the name has none. */
  static Finding judge(SegmentFamily family, Segment s, ShmMount mount, Snapshot snap, List<ProcessInfo> lastHolders) {
    return judge(family, s, mount, snap, lastHolders, false);
  }

  /**
   * As above; {@code madeAtShm}: the file's names were made at /dev/shm by the processes of the
   * containers that mounted it there (a dead container volume, WritersGone): shm_open makes a
   * name in the caller's /dev/shm, so a process whose mount namespace has the tmpfs elsewhere only
   * (the host's, which shows every pod's volume under the kubelet's directory) did not make it.
   */
  static Finding judge(SegmentFamily family, Segment s, ShmMount mount, Snapshot snap, List<ProcessInfo> lastHolders,
      boolean madeAtShm) {
    OptionalInt named = family == null ? OptionalInt.empty() : family.creatorPid(s.nameText());
    if (named.isEmpty()) {
      return null;
    }
    int pid = named.getAsInt();
    String creator = "its creator, pid " + pid + " (from its name), ";
    CreatorCandidates found = snap.creators();
    if (!found.answers(pid)) {
      return new Finding(false, creator + "may be alive: "
          + (found.problem() != null ? found.problem() : "that pid was not looked up in this pass"));
    }
    List<String> excluded = new ArrayList<>();
    CreatorCandidates.Candidate mayBe = null;
    for (CreatorCandidates.Candidate c : found.of(pid)) {
      String notIt = notTheCreator(c, s, mount, lastHolders, madeAtShm);
      if (notIt == null) {
        mayBe = c;
        break;
      }
      excluded.add(notIt);
    }
    if (mayBe != null) {
      return new Finding(false, creator + "is alive: " + process(pid, mayBe) + (mount == null ? "" : " can reach this mount")
          + (s.bornKnown() && mayBe.startNanos() >= 0 ? " and started before the file was made"
              : s.bornKnown() ? " and its start time is unknown" : " and the file's birth time is unknown"));
    }
    if (excluded.isEmpty()) {
      return new Finding(true, creator + "has exited: no live process that can reach this mount has pid " + pid
          + " in its own PID namespace");
    }
    return new Finding(true, creator + "has exited; that pid now belongs to a later process or one that cannot "
        + "reach this mount (" + String.join(", ", excluded.subList(0, Math.min(3, excluded.size())))
        + (excluded.size() > 3 ? " and " + (excluded.size() - 3) + " more" : "") + ")");
  }

  /** Why candidate {@code c} is provably not the file's creator, or null when it may be. */
  private static String notTheCreator(CreatorCandidates.Candidate c, Segment s, ShmMount mount,
      List<ProcessInfo> lastHolders, boolean madeAtShm) {
    String who = process(-1, c);
    if (!JobEvidence.mayHaveMade(c, s)) {
      return who + " runs as another user (uid " + new java.util.TreeSet<>(c.uids()).first()
          + "), not the file's owner (uid " + s.uid() + ")";
    }
    if (mount != null && !c.mayReach(mount.dev())) {
      return who + " cannot reach this mount";
    }
    if (mount != null && madeAtShm && !c.hasAtShm(mount.dev())) {
      return who + " does not have this volume at /dev/shm, where its name was made";
    }
    if (s.bornKnown() && c.startNanos() >= 0 && c.startNanos() > s.btimeNanos() + START_SLACK_NANOS) {
      return who + " started after the file was made";
    }
    if (c.ownNamespace() && c.startTicks() >= 0) {
      for (ProcessInfo seen : lastHolders) {
        if (seen.pid() == c.hostPid() && seen.startTicks() >= 0 && seen.startTicks() != c.startTicks()) {
          return who + " is a later process than the one seen holding the file";
        }
      }
    }
    return null;
  }

  /** "pid 45 of PID namespace 4026532201 (host pid 81234)", or "pid 45" in shmguard's own. */
  private static String process(int pid, CreatorCandidates.Candidate c) {
    if (c.ownNamespace()) {
      return "pid " + c.hostPid();
    }
    return (pid > 0 ? "pid " + pid + " of " : "") + "PID namespace " + c.pidNamespace() + " (host pid " + c.hostPid() + ")";
  }
}
