package org.shmguard.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.policy.family.SegmentFamily;

/**
 * The exit path's verdict: a file the last full pass judged {@link Verdict#HELD}, every holder of
 * which (by pid and start time) has gone since, is {@link Verdict#LEAKED} by the Judge's own rule
 * "every process that held it has exited", without a new listing or judging pass. It applies only
 * where nothing else the Judge weighs could come out otherwise: a complete pass, a mount shmguard
 * acts in, a name the patterns allow and the deny list does not, one link, not a hidden name of a
 * reap, a family (if any) whose leaks are its holders' exits and whose names give no creator pid,
 * not a failed creation, and at least one holder whose exit is evidence about its job
 * ({@link JobEvidence}). Everything else waits for the full pass that follows every exit. The
 * reap that follows keeps every check of the Reaper: the file's identity by name, a confirming
 * read of every fd table, the write lease, the mount check.
 *
 * <pre>{@code
 * ExitVerdict.Decision d = ExitVerdict.decide(last, exitedPids, gone, policy, now); // the exit pass's reap
 * Assessment leaked = ExitVerdict.leaked(held, judgement, gone, policy, now);       // one file; null: not on this path
 * }</pre>
 */
public final class ExitVerdict {
  /** Said after the Judge's reason, so the journal tells this path's evidence from a full pass's. */
  static final String EVIDENCE = "each exit seen on its pidfd and proven by pid and start time; the fd tables read again"
      + " and the mappings left to the write lease";

  private ExitVerdict() {}

  /**
   * What an exit pass reaps and whether it decided everything.
   *
   * @param leaked the files to reap, each with its leaked verdict
   * @param undecided some file every holder of which has gone, and whose holders' exits count, is
   *     not decided here (a family, a blocker, a name rule): the full pass decides it at once
   */
  public record Decision(List<Assessment> leaked, boolean undecided) {
    public Decision {
      leaked = List.copyOf(leaked);
    }
  }

  /**
   * The exit pass's decision for the processes {@code exited} (pids whose pidfds fired), from
   * {@code last}, the last full pass's judgement: among the files they held, those whose every
   * holder has gone. A file only lookups and other users' readers held is not undecided: their
   * exits prove nothing ({@link JobEvidence}), and the next full pass waits out its grace.
   */
  public static Decision decide(Judgement last, int[] exited, Predicate<ProcessInfo> gone, ReapPolicy policy,
      Instant now) {
    java.util.Map<Integer, Boolean> seen = new java.util.HashMap<>();
    Predicate<ProcessInfo> isGone = p -> seen.computeIfAbsent(p.pid(), pid -> gone.test(p)); // each process read once
    List<Assessment> found = new ArrayList<>();
    boolean undecided = false;
    for (Assessment a : last.segments()) {
      if (!heldByOneOf(a, exited)) {
        continue;
      }
      Assessment leaked = leaked(a, last, isGone, policy, now);
      if (leaked != null) {
        found.add(leaked);
      } else if (allGone(a, last, isGone) && anyCounts(a, last)) {
        undecided = true;
      }
    }
    return new Decision(found, undecided);
  }

  private static boolean allGone(Assessment a, Judgement last, Predicate<ProcessInfo> gone) {
    for (HolderRef h : a.holders()) {
      ProcessInfo p = last.snapshot().processes().get(h.pid());
      if (p == null || !gone.test(p)) {
        return false;
      }
    }
    return true;
  }

  private static boolean anyCounts(Assessment a, Judgement last) {
    for (HolderRef h : a.holders()) {
      if (JobEvidence.holderCounts(h, last.snapshot().processes().get(h.pid()), a.segment())) {
        return true;
      }
    }
    return false;
  }

  private static boolean heldByOneOf(Assessment a, int[] pids) {
    for (HolderRef h : a.holders()) {
      for (int pid : pids) {
        if (h.pid() == pid) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The leaked verdict for {@code held}, or null when this path does not decide it.
   *
   * @param judged the judgement {@code held} is part of: nothing is decided here when its plan had
   *     a blocker (an incomplete pass, not the host's PID namespace)
   * @param gone whether the process (pid and start time) the snapshot saw has gone now: exited
   *     and reaped, a zombie without threads, or its pid now another process's
   * @param now the time of this decision: the age the reap reports is the file's age now
   */
  public static Assessment leaked(Assessment held, Judgement judged, Predicate<ProcessInfo> gone, ReapPolicy policy,
      Instant now) {
    var s = held.segment();
    String name = s.nameText();
    Snapshot snap = judged.snapshot();
    if (!judged.plan().blockers().isEmpty() || !snap.complete()
        || (policy.requireHostPidNamespace() && !snap.hostPidNamespace())) {
      return null;
    }
    if (held.verdict() != Verdict.HELD || held.holders().isEmpty() || held.mount() == null
        || !held.mount().mayAct() || s.hasOtherLinks() || ReapPolicy.STRANDED.matches(name)
        || ReapPolicy.STRANDED_NAMED.matches(name) || policy.denying(name) != null) {
      return null;
    }
    SegmentFamily family = policy.families().familyOf(name);
    FamilySettings settings = policy.families().settings(family);
    boolean mayReap = policy.allowing(name) != null || (settings != null && settings.reap());
    if (!mayReap || (family != null && (!family.holdersExitedMeansLeaked() || family.creatorPid(name).isPresent()
        || family.failedCreation(s.sizeBytes())))) {
      return null;
    }
    List<ProcessInfo> last = new ArrayList<>();
    for (HolderRef h : held.holders()) {
      ProcessInfo info = snap.processes().get(h.pid());
      if (info == null || info.startTicks() < 0 || !gone.test(info)) {
        return null;
      }
      // Only a holder that could have been one of the file's users tells that its job let go
      // (JobEvidence); the exits of lookups and other users' readers prove nothing.
      if (JobEvidence.holderCounts(h, info, s) && last.stream().noneMatch(p -> p.pid() == info.pid())) {
        last.add(info);
      }
    }
    if (last.isEmpty()) {
      return null; // no holder whose exit counts: the full pass waits out the grace
    }
    // The age at this reap, not at the pass that saw it held.
    Duration age = Duration.between(s.lastChange(), now);
    if (age.isNegative()) {
      age = Duration.ZERO;
    }
    String reason = "unheld; every process that held it has exited (" + Judge.describeInfos(last) + "); " + EVIDENCE;
    return new Assessment(s, held.mount(), Verdict.LEAKED, reason, held.kind(), List.of(), age, last,
        held.family(), held.grace(), true, held.formerContainer());
  }
}
