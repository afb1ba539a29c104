package org.shmguard.view;

import java.util.List;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Bytes;
import org.shmguard.text.Durations;
import org.shmguard.policy.HealthScope;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.MountReport;

/**
 * The human form of a scan: the mounts, what hides in them, then every examined file with its
 * verdict. What {@code shmguard scan} prints and what the daemon answers to SCAN (through
 * {@link ScanOutput}), below both the command line and the advice socket.
 */
public final class ScanText {
  private ScanText() {}

  public static String scan(Judgement j) {
    return scan(j, false);
  }

  /** {@code withHistory}: the daemon's judgement, whose verdicts need no grace* mark (see {@link ScanView#of(Judgement, boolean)}). */
  public static String scan(Judgement j, boolean withHistory) {
    Snapshot snap = j.snapshot();
    StringBuilder out = new StringBuilder();
    Table mounts = new Table("MOUNT", "DEV", "SIZE", "USED", "FREE", "USE%", "HIDDEN", "FILES", "ORIGIN");
    for (MountReport r : j.mounts()) {
      ShmMount m = r.mount();
      ShmMount.Usage u = m.usage();
      mounts.row(m.displayName(), m.dev(), u == null ? "?" : Bytes.human(u.sizeBytes()), u == null ? "?" : Bytes.human(u.usedBytes()),
          u == null ? "?" : Bytes.human(u.freeBytes()), u == null ? "?" : Math.round(u.usedFraction() * 100) + "%",
          Bytes.human(r.hiddenBytes()), r.segments(),
          m.origin().label() + (HealthScope.of(m) == HealthScope.NODE ? "" : " (" + HealthScope.whose(m) + ", report only)"));
    }
    out.append(mounts.isEmpty() ? "No shm mounts found.\n" : mounts.render());
    for (MountReport r : j.mounts()) {
      if (r.mount().workload() != null) {
        out.append("  ").append(r.mount().displayName()).append(": ").append(r.mount().workload().details()).append('\n');
      }
    }
    for (MountReport r : j.mounts()) {
      if (HealthScope.of(r.mount()) == HealthScope.OWNER) {
        out.append("  report only: ").append(r.mount().displayName()).append(" is ").append(HealthScope.whose(r.mount()))
            .append(", not the node's: ").append(r.mount().reportOnly()).append('\n');
      }
    }
    for (MountReport r : j.mounts()) {
      for (MountReport.Hidden h : r.hidden()) {
        out.append("  hidden in ").append(r.mount().displayName()).append(": ").append(Bytes.human(h.bytes()))
            .append(" ").append(h.path()).append(" held by ").append(describe(snap, h.pids())).append('\n');
      }
    }
    var byMount = ScanView.byMount(j);
    for (MountReport r : j.mounts()) {
      var c = snap.contents(r.mount().dev());
      String note = c == null ? ScanView.note(r.mount()) : ScanView.note(c);
      if (note != null) {
        out.append("  ").append(r.mount().displayName()).append(": ").append(note).append('\n');
        // Files only counted can be what fills the mount: name the largest, whatever their names.
        List<ScanView.FillerView> largest = ScanView.largest(r, byMount.getOrDefault(r.mount().dev(), List.of()), snap);
        if (largest.stream().anyMatch(f -> !f.examined())) {
          out.append("  ").append(r.mount().displayName()).append(": largest: ")
              .append(String.join("; ", largest.stream().map(ScanView.FillerView::text).toList())).append('\n');
        }
      }
    }
    String notExamined = snap.notExamined();
    if (notExamined != null) {
      out.append("  not examined in this pass: ").append(notExamined).append('\n');
    }
    out.append('\n');
    if (j.segments().isEmpty()) {
      out.append("No files with reapable names (reap.patterns) in the watched mounts.\n");
    } else {
      Table segs = new Table("MOUNT", "NAME", "ALLOC", "AGE", "KIND", "VERDICT", "HOLDERS / REASON");
      for (Assessment a : j.segments()) {
        String who = a.holders().isEmpty() ? a.reason() : describe(snap, a.holders().stream().map(h -> h.pid()).distinct().toList());
        segs.row(a.mount() == null ? "?" : a.mount().displayName(), a.segment().displayName(),
            Bytes.human(a.segment().allocatedBytes()), Durations.human(a.age()), a.kind(),
            a.verdict().label() + (!withHistory && ScanView.daemonMayDiffer(a) ? "*" : ""), who);
      }
      out.append(segs.render());
      if (!withHistory && j.segments().stream().anyMatch(ScanView::daemonMayDiffer)) {
        out.append(wrap(ScanView.NO_HISTORY, 100));
      }
    }
    footer(out, j);
    return out.toString();
  }

  /** Text broken into lines of at most {@code width} columns, at spaces. */
  public static String wrap(String text, int width) {
    StringBuilder out = new StringBuilder();
    StringBuilder line = new StringBuilder();
    for (String word : text.split(" ")) {
      if (line.length() > 0 && line.length() + 1 + word.length() > width) {
        out.append(line).append('\n');
        line.setLength(0);
      }
      line.append(line.length() == 0 ? "" : " ").append(word);
    }
    return out.append(line).append('\n').toString();
  }

  /** The warnings and what blocks reaping, after a scan or a clean. */
  public static void footer(StringBuilder out, Judgement j) {
    Snapshot snap = j.snapshot();
    for (String w : snap.warnings()) {
      out.append("warning: ").append(w).append('\n');
    }
    for (String b : j.plan().blockers()) {
      out.append("not reaping: ").append(b).append('\n');
    }
  }

  private static String describe(Snapshot snap, List<Integer> pids) {
    StringBuilder sb = new StringBuilder();
    for (int pid : pids) {
      var info = snap.processes().get(pid);
      sb.append(sb.length() == 0 ? "" : ", ").append(info == null ? "pid " + pid : info.describe());
    }
    return sb.toString();
  }
}
