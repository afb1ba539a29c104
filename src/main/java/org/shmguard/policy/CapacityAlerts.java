package org.shmguard.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.FileKey;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Snapshot;

/**
 * Turns one pass's capacity picture into events: level changes per mount (with the hidden bytes
 * and who holds them), and each failed NCCL allocation once. It keeps the one capacity state
 * machine ({@link CapacityWatch}): the changes it reports also drive the remount trigger.
 */
final class CapacityAlerts {
  private final int topHolders;
  private CapacityWatch watch;
  private Set<FileKey> reportedFailures = new HashSet<>();

  CapacityAlerts(CapacityPolicy policy, int topHolders) {
    this.watch = CapacityWatch.start(policy);
    this.topHolders = topHolders;
  }

  /** Raises this pass's events into {@code sink} and returns the level changes it brought. */
  List<CapacityWatch.Change> report(Judgement j, Consumer<Alert> sink) {
    CapacityWatch.Step step = watch.next(j.mounts());
    watch = step.watch();
    for (CapacityWatch.Change c : step.changes()) {
      EventKind kind = switch (c.to()) {
        case OK -> EventKind.CAPACITY_OK;
        case WARNING -> EventKind.CAPACITY_WARNING;
        case CRITICAL -> EventKind.CAPACITY_CRITICAL;
      };
      sink.accept(mountAlert(kind, c.report(), j.snapshot(), c.usedPercent(),
          String.format("%s is %.0f%% full (was %s, now %s)", c.report().mount().displayName(), c.usedPercent(),
              c.from().label(), c.to().label())));
    }
    Set<FileKey> failures = new HashSet<>();
    for (AllocationFailures.Failure f : AllocationFailures.find(j)) {
      Assessment a = f.assessment();
      FileKey key = a.segment().key();
      failures.add(key);
      if (!reportedFailures.contains(key)) {
        var u = a.mount() == null ? null : a.mount().usage();
        sink.accept(SegmentAlert.of(EventKind.ALLOCATION_FAILED, "failed NCCL allocation:", a, f.explanation())
            .with("SHM_FREE_BYTES", u == null ? null : u.freeBytes())
            .with("SHM_SIZE_BYTES", u == null ? null : u.sizeBytes()));
      }
    }
    reportedFailures = failures;
    return step.changes();
  }

  CapacityLevel level(org.shmguard.model.Dev dev) {
    return watch.level(dev);
  }

  /** An event about one mount: usage, hidden bytes and their top holders. */
  Alert mountAlert(EventKind kind, MountReport r, Snapshot snap, double usedPercent, String message) {
    var m = r.mount();
    var u = m.usage();
    Alert a = Alert.of(kind, message + "; " + r.segments() + " segments, " + r.hiddenBytes() + " bytes hidden"
            + holdersText(r, snap))
        .with("SHM_MOUNT", m.displayName())
        .with("SHM_CONTAINER", m.container())
        .with("SHM_USED_PERCENT", String.format("%.1f", usedPercent))
        .with("SHM_BYTES", u == null ? null : u.usedBytes())
        .with("SHM_SIZE_BYTES", u == null ? null : u.sizeBytes())
        .with("SHM_FREE_BYTES", u == null ? null : u.freeBytes())
        .with("SHM_SEGMENTS", r.segments())
        .with("SHM_HIDDEN_BYTES", r.hiddenBytes());
    int n = 0;
    for (MountReport.Hidden h : r.hidden()) {
      for (int pid : h.pids()) {
        if (n++ >= topHolders) {
          return a;
        }
        ProcessInfo p = snap.processes().get(pid);
        a = a.with("SHM_HOLDER_PID", pid).with("SHM_HOLDER_COMM", p == null ? "?" : p.command());
      }
    }
    return a;
  }

  private String holdersText(MountReport r, Snapshot snap) {
    StringBuilder sb = new StringBuilder();
    int n = 0;
    for (MountReport.Hidden h : r.hidden()) {
      if (n++ >= topHolders) {
        break;
      }
      sb.append(sb.length() == 0 ? "; largest hidden: " : ", ").append(h.bytes()).append(" bytes held by");
      for (int pid : h.pids()) {
        ProcessInfo p = snap.processes().get(pid);
        sb.append(' ').append(p == null ? pid + " ?" : p.describe());
      }
    }
    return sb.toString();
  }
}
