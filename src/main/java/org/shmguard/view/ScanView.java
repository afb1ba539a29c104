package org.shmguard.view;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.model.Coverage;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountContents;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.model.Workload;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Counts;
import org.shmguard.policy.HealthScope;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.MountFillers;
import org.shmguard.policy.MountReport;

/**
 * What {@code scan --json} prints: a stable, documented shape built from a judgement. Field names
 * are part of shmguard's interface; add fields, never rename them.
 */
public record ScanView(String takenAt, Pass pass, List<MountView> mounts, List<SegmentView> segments, List<String> notes,
    CoverageView coverage) {

  /**
   * Why a file this scan shows in grace may already be leaked to the daemon: the one rule a fresh
   * scan cannot apply, since it has no holder history.
   */
  static final String NO_HISTORY = "grace*: this scan has no holder history. The daemon remembers who held each file "
      + "and calls it leaked as soon as every holder it saw has exited, without waiting out reap.grace: "
      + "it may reap a file this scan shows in grace.";

  /** True where the daemon's verdict on this file can differ: unheld, in its grace, with no holder history. */
  static boolean daemonMayDiffer(Assessment a) {
    return a.verdict() == org.shmguard.policy.Verdict.GRACE && a.lastHolders().isEmpty();
  }

  public record Pass(int processes, boolean complete, boolean hostPidNamespace, List<String> problems, List<String> warnings) {}

  public record MountView(
      String path,
      String mountPoint,
      String dev,
      String origin,
      String container,
      String namespace,
      String options,
      Long sizeBytes,
      Long usedBytes,
      Long freeBytes,
      Double usedPercent,
      long hiddenBytes,
      int segments,
      List<HiddenView> hidden,
      String reportOnly,
      Long fileBytes,
      Long otherEntries,
      Long matching,
      Long examined,
      Long notExamined,
      String note,
      String scope,
      Long ownerUid,
      List<FillerView> largest,
      Workload workload) {}

  /**
   * One of the largest files of a mount, whatever its name: {@code examined} when it is also in
   * the segment list with its verdict; {@code text} names its holders or last holders.
   */
  public record FillerView(String name, long allocatedBytes, List<Integer> holderPids, boolean examined, String text) {}

  public record HiddenView(String path, long bytes, List<HolderView> holders) {}

  /**
   * What the pass did not examine over the whole host: the global budget and what it left out.
   *
   * @param note the same in one sentence, null when nothing was left out
   */
  public record CoverageView(int examineTotal, int examined, long notExamined, int reportOnlyMounts,
      long reportOnlyFiles, int namespacesLeftOut, int reportLimit, String note) {
    static CoverageView of(Snapshot snap) {
      Coverage c = snap.coverage();
      return new CoverageView(c.examineTotal(), c.kept(), snap.contents().stream().mapToLong(MountContents::unexamined).sum(),
          c.reportOnlyMounts(), c.reportOnlyFiles(), c.namespacesLeftOut(), c.reportLimit(), snap.notExamined());
    }
  }

  public record HolderView(int pid, String command, int uid, String user, String container, List<String> access) {}

  public record SegmentView(
      String mount,
      String name,
      long sizeBytes,
      long allocatedBytes,
      long ageSeconds,
      String kind,
      String family,
      String verdict,
      String reason,
      List<HolderView> holders,
      List<HolderView> lastHolders,
      Boolean daemonMayDiffer) {}

  public static ScanView of(Judgement j) {
    return of(j, false);
  }

  /**
   * {@code withHistory}: the judgement is the daemon's, made with its holder history, so no
   * verdict of it can differ from the daemon's and it carries no grace* mark or note.
   */
  public static ScanView of(Judgement j, boolean withHistory) {
    Snapshot snap = j.snapshot();
    Map<org.shmguard.model.Dev, List<Assessment>> byMount = byMount(j);
    List<MountView> mounts = new ArrayList<>();
    for (MountReport r : j.mounts()) {
      ShmMount m = r.mount();
      ShmMount.Usage u = m.usage();
      List<HiddenView> hidden = new ArrayList<>();
      for (MountReport.Hidden h : r.hidden()) {
        List<HolderView> hv = new ArrayList<>();
        for (int pid : h.pids()) {
          hv.add(holder(snap.processes().get(pid), pid, accessOf(snap.holders().holders(h.key()), pid)));
        }
        hidden.add(new HiddenView(h.path(), h.bytes(), hv));
      }
      MountContents c = snap.contents(m.dev());
      mounts.add(new MountView(m.path(), m.mountPoint(), m.dev().toString(), m.origin().label(), m.container(),
          m.namespace(), m.options(),
          u == null ? null : u.sizeBytes(), u == null ? null : u.usedBytes(), u == null ? null : u.freeBytes(),
          u == null ? null : Math.round(u.usedFraction() * 1000) / 10.0,
          r.hiddenBytes(), r.segments(), hidden, m.reportOnly(),
          c == null ? null : c.fileBytes(), c == null ? null : c.otherEntries(), c == null ? null : c.matching(),
          c == null ? null : (long) c.examined(), c == null ? null : c.unexamined(), c == null ? note(m) : note(c),
          HealthScope.of(m).label(), m.ownerUid(),
          largest(r, byMount.getOrDefault(m.dev(), List.of()), snap), m.workload()));
    }
    List<SegmentView> segments = new ArrayList<>();
    for (Assessment a : j.segments()) {
      segments.add(segment(a, snap, withHistory));
    }
    List<String> notes = !withHistory && j.segments().stream().anyMatch(ScanView::daemonMayDiffer) ? List.of(NO_HISTORY)
        : List.of();
    return new ScanView(snap.takenAt().toString(),
        new Pass(snap.processesScanned(), snap.complete(), snap.hostPidNamespace(), snap.problems(), snap.warnings()),
        mounts, segments, notes, CoverageView.of(snap));
  }

  /** For a mount that was not listed: why, or null. */
  static String note(ShmMount m) {
    if (m.mayAct()) {
      return null;
    }
    ShmMount.Usage u = m.usage();
    return "measured, not listed: shmguard only reports this mount, so it keeps no record of its files"
        + (u == null ? "" : " (" + Counts.of(Math.max(0, u.inodes() - u.freeInodes() - 1), "file") + " by statvfs, not examined)");
  }

  /**
   * What the segment list leaves out for this mount, in one sentence, or null when it shows every
   * file: files no pattern allows are counted only, and at most reap.examineLimit others are listed.
   */
  static String note(MountContents c) {
    if (c == null || c.files() == c.examined()) {
      return null;
    }
    StringBuilder sb = new StringBuilder();
    if (c.unexamined() > 0) {
      sb.append(Counts.of(c.unexamined(), "more file")).append(" with reapable names not shown (reap.examineLimit is ")
          .append(c.limit()).append("; the oldest are shown)");
    }
    long others = c.files() - c.matching();
    if (others > 0) {
      sb.append(sb.length() == 0 ? "" : "; ").append(Counts.of(others, "file"))
          .append(others == 1 ? " whose name no reap pattern allows (or reap.deny names) is counted, not listed"
              : " whose names no reap pattern allows (or reap.deny names) are counted, not listed");
    }
    return sb.toString();
  }

  /** The judgement's segments by mount, so that each mount's largest files cost its own segments only. */
  static Map<org.shmguard.model.Dev, List<Assessment>> byMount(Judgement j) {
    Map<org.shmguard.model.Dev, List<Assessment>> out = new java.util.HashMap<>();
    for (Assessment a : j.segments()) {
      out.computeIfAbsent(a.segment().mountDev(), d -> new ArrayList<>()).add(a);
    }
    return out;
  }

  /** The mount's largest files whatever their names, largest first: what fills it. */
  static List<FillerView> largest(MountReport r, List<Assessment> segmentsOfMount, Snapshot snap) {
    List<FillerView> out = new ArrayList<>();
    for (MountFillers.Filler f : MountFillers.of(r, segmentsOfMount, snap, MountContents.LARGEST_KEPT)) {
      out.add(new FillerView(f.name(), f.bytes(), f.pids(), f.examined(), f.text()));
    }
    return out;
  }

  public static SegmentView segment(Assessment a, Snapshot snap) {
    return segment(a, snap, false);
  }

  static SegmentView segment(Assessment a, Snapshot snap, boolean withHistory) {
    Map<Integer, List<String>> byPid = new LinkedHashMap<>();
    for (HolderRef h : a.holders()) {
      byPid.computeIfAbsent(h.pid(), p -> new ArrayList<>()).add(h.access().label());
    }
    List<HolderView> holders = new ArrayList<>();
    byPid.forEach((pid, access) -> holders.add(holder(snap.processes().get(pid), pid, access)));
    List<HolderView> last = new ArrayList<>();
    for (ProcessInfo p : a.lastHolders()) {
      last.add(holder(p, p.pid(), List.of()));
    }
    ShmMount m = a.mount();
    return new SegmentView(m == null ? a.segment().mountDev().toString() : m.displayName(),
        a.segment().displayName(), a.segment().sizeBytes(), a.segment().allocatedBytes(), a.age().toSeconds(),
        a.kind(), a.family(), a.verdict().label(), a.reason(), holders, last,
        !withHistory && daemonMayDiffer(a) ? Boolean.TRUE : null);
  }

  private static List<String> accessOf(List<HolderRef> refs, int pid) {
    List<String> out = new ArrayList<>();
    for (HolderRef r : refs) {
      if (r.pid() == pid && !out.contains(r.access().label())) {
        out.add(r.access().label());
      }
    }
    return out;
  }

  private static HolderView holder(ProcessInfo p, int pid, List<String> access) {
    if (p == null) {
      return new HolderView(pid, null, -1, null, null, access);
    }
    return new HolderView(pid, p.command(), p.uid(), p.user(), p.container(), access);
  }
}
