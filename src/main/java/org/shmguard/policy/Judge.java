package org.shmguard.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountContents;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.policy.family.SegmentFamily;
import org.shmguard.text.Durations;
import org.shmguard.text.Glob;

/**
 * The decide stage: verdicts for every segment, hidden usage for every mount, and the reap plan.
 * A pure function of the snapshot, the holder history and the policy: no I/O, no clock.
 *
 * <pre>{@code
 * Judgement j = Judge.judge(snapshot, HolderHistory.empty(), policy);
 * j.plan().candidates().forEach(...);
 * }</pre>
 */
public final class Judge {
  private Judge() {}

  public static Judgement judge(Snapshot snap, HolderHistory history, ReapPolicy policy) {
    List<Assessment> assessments = new ArrayList<>(snap.segments().size());
    Map<org.shmguard.model.Dev, String> writersGone = new HashMap<>();
    for (ShmMount m : snap.mounts()) {
      String why = WritersGone.of(m, snap, history);
      if (why != null) {
        writersGone.put(m.dev(), why);
      }
    }
    for (Segment s : snap.segments()) {
      assessments.add(assess(s, snap, history, policy, writersGone.get(s.mountDev())));
    }
    List<String> blockers = new ArrayList<>(snap.problems());
    if (policy.requireHostPidNamespace() && !snap.hostPidNamespace()) {
      blockers.add("shmguard is not in the host's PID namespace, so it cannot see every process that may hold a "
          + "segment, and reaps nothing: in a sandbox of your own (unshare -p with its own /dev/shm, where no process "
          + "outside can hold its files) set reap.requireHostPidNamespace: false; for the host's files, run it in the "
          + "host's PID namespace (hostPID in Kubernetes)");
    }
    List<Assessment> candidates = new ArrayList<>();
    if (blockers.isEmpty()) {
      for (Assessment a : assessments) {
        if (a.verdict().reapable() && a.mayReap() && (a.mount() == null || a.mount().mayAct())) {
          candidates.add(a);
        }
      }
    }
    return new Judgement(snap, assessments, mountReports(snap), new ReapPlan(candidates, blockers));
  }

  /** @param writersGone why every writer of the segment's volume has exited (WritersGone), or null */
  static Assessment assess(Segment s, Snapshot snap, HolderHistory history, ReapPolicy policy, String writersGone) {
    String name = s.nameText();
    String kind = SegmentKind.guess(name, s.sizeBytes());
    ShmMount mount = snap.mount(s.mountDev());
    FileKey key = s.key();
    List<HolderRef> holders = snap.holders().holders(key);
    List<ProcessInfo> last = history.lastHolders(key);
    Duration age = Duration.between(s.lastChange(), snap.takenAt());
    if (age.isNegative()) {
      age = Duration.ZERO;
    }
    SegmentFamily family = policy.families().familyOf(name);
    FamilySettings settings = policy.families().settings(family);
    Duration grace = policy.graceFor(s);
    Verdict verdict;
    String reason;
    Glob denied = policy.denying(name);
    Glob allowed = policy.allowing(name);
    if (denied != null) {
      verdict = Verdict.IGNORED;
      reason = "reap.deny has " + denied;
    } else if (allowed == null && settings == null) {
      verdict = Verdict.IGNORED;
      reason = "no reap.patterns entry matches";
    } else if (s.hasOtherLinks()) {
      verdict = Verdict.IGNORED;
      reason = "it has " + s.nlink() + " hard links; unlinking one name would free nothing";
    } else if (!holders.isEmpty()) {
      verdict = Verdict.HELD;
      reason = "held by " + describePids(holders);
    } else if (family != null && family.failedCreation(s.sizeBytes())) {
      verdict = Verdict.FAILED_CREATION;
      reason = "0 bytes and unheld: an NCCL segment whose extension failed";
    } else if ((family == null || family.holdersExitedMeansLeaked()) && history.allHoldersExited(key, snap)) {
      verdict = Verdict.LEAKED;
      reason = "unheld; every process that held it has exited (" + describeInfos(last) + ")";
    } else if (writersGone != null && leakedOnceWritersGone(family, s, mount, snap, last)) {
      verdict = Verdict.LEAKED;
      reason = "unheld; " + writersGone;
    } else if (age.compareTo(grace) >= 0) {
      verdict = Verdict.LEAKED;
      reason = "unheld and unchanged for " + Durations.human(age) + " (grace " + Durations.human(grace) + ")";
    } else {
      verdict = Verdict.GRACE;
      reason = "unheld but changed " + Durations.human(age) + " ago; grace is " + Durations.human(grace);
    }
    String waiting = verdict == Verdict.LEAKED ? WaitingInJob.why(family, s, snap) : null;
    if (waiting != null) {
      verdict = Verdict.WAITING;
      reason = reason + ", but " + waiting;
    }
    boolean mayReap = allowed != null || (settings != null && settings.reap());
    if (!mayReap && writersGone != null && family != null && family.reapedOnceWritersGone()) {
      mayReap = true;
      if (verdict.reapable() && !reason.contains(writersGone)) {
        reason = reason + "; " + writersGone;
      }
    }
    // A file whose name gives its creator's pid is never reaped while that creator may live,
    // whatever the patterns or families.<name>.reap say: it may be on its way to a receiver.
    CreatorEvidence.Finding creator = verdict.reapable()
        ? CreatorEvidence.judge(family, s, mount, snap, last, writersGone != null) : null;
    if (creator != null && !creator.dead()) {
      mayReap = false;
      reason = reason + "; kept: " + creator.why();
    } else if (creator != null) {
      mayReap = true;
      reason = reason + "; " + creator.why();
    } else if (verdict.reapable() && !mayReap) {
      reason = reason + "; reported, not reaped: families." + family.name() + ".reap is off"
          + (family.holdersExitedMeansLeaked() ? "" : " and its creator may have handed it on");
    }
    if (verdict.reapable() && mayReap && !snap.complete()) {
      reason = reason + "; not confirmed: the /proc pass was incomplete";
    }
    if (verdict.reapable() && mayReap && mount != null && !mount.mayAct()) {
      reason = reason + "; not reaped: shmguard only reports this mount (" + mount.reportOnly() + ")";
    }
    String formerContainer = mount != null && mount.container() == null && mount.origin() != MountOrigin.HOST
        ? history.lastContainer(mount.dev()) : null;
    return new Assessment(s, mount, verdict, reason, kind, holders, age, last, family == null ? null : family.name(),
        grace, mayReap, formerContainer);
  }

  /**
   * Whether an unheld file on a volume whose every writer has exited is leaked at once: a file of
   * no family or of one whose holders' exit means leaked (nothing holds anything on the volume), or
   * one whose name's creator is provably dead. Python shared memory names no creator: its grace
   * holds. A container's volume had its names made at its /dev/shm: a process that has it mounted
   * elsewhere only is not their creator.
   */
  private static boolean leakedOnceWritersGone(SegmentFamily family, Segment s, ShmMount mount, Snapshot snap,
      List<ProcessInfo> last) {
    if (family == null || family.holdersExitedMeansLeaked()) {
      return true;
    }
    if (!family.reapedOnceWritersGone()) {
      return false;
    }
    CreatorEvidence.Finding creator = CreatorEvidence.judge(family, s, mount, snap, last, true);
    return creator != null && creator.dead();
  }

  private static List<MountReport> mountReports(Snapshot snap) {
    // Only the kept segments are known by inode; a held file that is visible but was not kept has
    // no "(deleted)" holder and is skipped below all the same.
    Map<org.shmguard.model.Dev, Set<Long>> visible = new HashMap<>();
    for (Segment s : snap.segments()) {
      visible.computeIfAbsent(s.mountDev(), d -> new HashSet<>()).add(s.ino());
    }
    Map<org.shmguard.model.Dev, List<MountReport.Hidden>> hidden = new LinkedHashMap<>();
    for (FileKey key : snap.holders().keys()) {
      if (visible.getOrDefault(key.dev(), Set.of()).contains(key.ino())) {
        continue;
      }
      List<HolderRef> refs = snap.holders().holders(key);
      boolean deleted = refs.stream().anyMatch(HolderRef::deleted);
      if (!deleted) {
        continue; // a file in a subdirectory: visible, just not in the root
      }
      long bytes = 0;
      Set<Integer> pids = new TreeSet<>();
      String path = null;
      for (HolderRef r : refs) {
        bytes = Math.max(bytes, r.bytes());
        pids.add(r.pid());
        if (path == null || r.access() == org.shmguard.model.Access.FD) {
          path = r.path();
        }
      }
      hidden.computeIfAbsent(key.dev(), d -> new ArrayList<>())
          .add(new MountReport.Hidden(key, path, bytes, new ArrayList<>(pids)));
    }
    List<MountReport> reports = new ArrayList<>();
    for (ShmMount m : snap.mounts()) {
      List<MountReport.Hidden> h = hidden.getOrDefault(m.dev(), List.of());
      h = new ArrayList<>(h);
      h.sort((a, b) -> Long.compare(b.bytes(), a.bytes()));
      // The listing's counts, not sums over kept segments: a pass keeps at most reap.examineLimit files.
      MountContents c = snap.contents(m.dev());
      int files = c == null ? 0 : (int) Math.min(Integer.MAX_VALUE, c.files());
      long fileBytes = c == null ? 0 : c.fileBytes();
      reports.add(new MountReport(m, files, fileBytes, h.stream().mapToLong(MountReport.Hidden::bytes).sum(), h));
    }
    return reports;
  }

  private static String describePids(List<HolderRef> holders) {
    Map<Integer, List<String>> byPid = new LinkedHashMap<>();
    for (HolderRef h : holders) {
      byPid.computeIfAbsent(h.pid(), p -> new ArrayList<>()).add(h.access().label());
    }
    List<String> each = new ArrayList<>();
    byPid.forEach((pid, how) -> each.add("pid " + pid + " (" + String.join("+", how) + ")"));
    return firstFew(each);
  }

  static String describeInfos(List<ProcessInfo> infos) {
    return firstFew(infos.stream().map(ProcessInfo::describe).toList());
  }

  /** How many holders a reason names; the rest are counted ("and 61 more"), so that a reason stays one readable line. */
  static final int NAMED_HOLDERS = 3;

  private static String firstFew(List<String> items) {
    String named = String.join(", ", items.subList(0, Math.min(NAMED_HOLDERS, items.size())));
    return items.size() > NAMED_HOLDERS ? named + " and " + (items.size() - NAMED_HOLDERS) + " more" : named;
  }
}
