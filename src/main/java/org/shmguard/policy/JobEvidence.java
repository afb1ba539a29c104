package org.shmguard.policy;

import java.util.List;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.Use;

/**
 * Whose evidence counts about a file's job: the one rule every path that reaps on a process's exit
 * or death asks (the full pass's "every holder has exited", the exit path, the holder history, the
 * creator a name gives). Evidence belongs to the file's owner and job, or it is none. Pure: no I/O.
 *
 * <pre>{@code
 * if (JobEvidence.holderCounts(ref, process, segment)) { ... its exit says the job let go ... }
 * if (!JobEvidence.mayHaveMade(candidate, segment)) { ... not the creator the name gives ... }
 * }</pre>
 *
 * <p>A holder's exit is evidence only from a process that could have been one of the file's users:
 * <ul>
 *   <li>never from an {@code O_PATH} fd: a lookup by name, which any user may make of any file in a
 *       sticky, world-writable directory, with no permission on the file itself;
 *   <li>from a process of the file's owner (real uid, as the host's user namespace maps both);
 *   <li>from a process of another uid only if it could change the file (opened for writing, or
 *       mapped shared and writable): such a process could truncate or destroy the file anyway, so
 *       its exit gives it no power it did not have. A process of another uid that could only read
 *       it proves nothing.
 * </ul>
 * Whatever is not evidence falls back to the grace, never to a reap.
 *
 * <p>A creator candidate (a live process with the pid a file's name gives) can be ruled out only
 * by what proves it could not have made the file; one of its uids (real, effective, saved,
 * filesystem) being the file's owner keeps it a candidate. A process none of whose uids is the
 * owner did not make the file (a tmpfs file takes its creator's filesystem uid), so another user's
 * sleepers never keep a leak that is not theirs. Where its uids could not be read it stays a
 * candidate.
 */
public final class JobEvidence {
  private JobEvidence() {}

  /**
   * Whether {@code holder}'s exit is evidence about {@code s}'s job.
   *
   * @param process who held it, as the pass read it; null or unknown (its uid not read): only a
   *     writer counts
   */
  public static boolean holderCounts(HolderRef holder, ProcessInfo process, Segment s) {
    if (holder.use() == Use.LOOKUP) {
      return false;
    }
    if (holder.use() == Use.WRITE) {
      return true;
    }
    return process != null && process.uid() >= 0 && process.uid() == s.uid();
  }

  /** Whether any of {@code refs} (one process's holds of {@code s}) makes that process's exit evidence. */
  public static boolean anyCounts(List<HolderRef> refs, ProcessInfo process, Segment s) {
    for (HolderRef r : refs) {
      if (holderCounts(r, process, s)) {
        return true;
      }
    }
    return false;
  }

  /** Why {@code holder} proves nothing by exiting, for a reason's clause; null when it counts. */
  public static String whyNot(HolderRef holder, ProcessInfo process, Segment s) {
    if (holderCounts(holder, process, s)) {
      return null;
    }
    String who = process == null ? "pid " + holder.pid() : process.describe();
    if (holder.use() == Use.LOOKUP) {
      return who + " only looked it up (O_PATH)";
    }
    return who + " is not its owner (uid " + s.uid() + ") and could only read it";
  }

  /**
   * Whether {@code c} may have made {@code s}: one of its uids is the file's owner, or its uids are
   * not known.
   */
  public static boolean mayHaveMade(CreatorCandidates.Candidate c, Segment s) {
    return c.uids() == null || c.uids().contains(s.uid());
  }
}
