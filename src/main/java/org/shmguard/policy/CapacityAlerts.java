package org.shmguard.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.FileKey;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Bytes;
import org.shmguard.text.Counts;
import org.shmguard.text.Durations;

/**
 * Turns one pass's capacity picture into events: level changes per mount (with the hidden bytes
 * and who holds them), and each failed NCCL allocation once: the node's where its tmpfs is out
 * of room for an NCCL segment ({@link AllocationFailures#outOfSpace}) at this pass or one within
 * {@link #OUT_OF_SPACE_RECENT}, else its owner's, at most one such event per owner uid every
 * {@link OwnerRate#INTERVAL}. It keeps the one capacity state
 * machine ({@link CapacityWatch}): the changes it reports also drive the remount trigger.
 */
final class CapacityAlerts {
  private int topHolders;
  private CapacityWatch watch;
  private Set<FileKey> reportedFailures = new HashSet<>();
  private List<ShmMount> freshFailures = List.of();
  /** Failed creations on mounts with room are their owners' matter: at most one event per owner an interval. */
  private final OwnerRate ownerRate = new OwnerRate();
  /** How long a mount seen out of room for an NCCL segment still counts as out of room. */
  static final Duration OUT_OF_SPACE_RECENT = Duration.ofMinutes(1);
  /** The last pass that saw each mount out of room for an NCCL segment, within {@link #OUT_OF_SPACE_RECENT}. */
  private final Map<org.shmguard.model.Dev, Instant> lastOutOfSpace = new HashMap<>();

  CapacityAlerts(CapacityPolicy policy, int topHolders) {
    this.watch = CapacityWatch.start(policy);
    this.topHolders = topHolders;
  }

  /** New thresholds and holder count (a reloaded configuration), keeping each mount's level: nothing is raised again. */
  void reconfigure(CapacityPolicy policy, int newTopHolders) {
    watch = watch.withPolicy(policy);
    topHolders = newTopHolders;
  }

  /**
   * Raises this pass's events into {@code sink} and returns the level changes it brought; those
   * that would grow their mount say so while {@code remount} is off ({@link RemountPolicy#noteOn}).
   */
  List<CapacityWatch.Change> report(Judgement j, RemountPolicy remount, Consumer<Alert> sink) {
    CapacityWatch.Step step = watch.next(j.mounts());
    watch = step.watch();
    for (CapacityWatch.Change c : step.changes()) {
      EventKind kind = switch (c.to()) {
        case OK -> EventKind.CAPACITY_OK;
        case WARNING -> EventKind.CAPACITY_WARNING;
        case CRITICAL -> EventKind.CAPACITY_CRITICAL;
      };
      Alert alert = mountAlert(kind, c.report(), j, c.usedPercent(),
          String.format("%s is %.0f%% full (was %s, now %s)", c.report().mount().displayName(), c.usedPercent(),
              c.from().label(), c.to().label()));
      sink.accept(kind == EventKind.CAPACITY_CRITICAL ? remount.noteOn(alert, c.report().mount()) : alert);
    }
    Set<FileKey> failures = new HashSet<>();
    List<ShmMount> fresh = new ArrayList<>();
    Instant now = j.snapshot().takenAt();
    ownerRate.forget(now);
    lastOutOfSpace.values().removeIf(at -> Duration.between(at, now).compareTo(OUT_OF_SPACE_RECENT) > 0);
    for (MountReport r : j.mounts()) {
      if (AllocationFailures.outOfSpace(r.mount().usage())) {
        lastOutOfSpace.put(r.mount().dev(), now);
      }
    }
    for (AllocationFailures.Failure f : AllocationFailures.find(j)) {
      Assessment a = f.assessment();
      FileKey key = a.segment().key();
      failures.add(key);
      if (reportedFailures.contains(key)) {
        continue;
      }
      var u = a.mount() == null ? null : a.mount().usage();
      // out of room now, or at a pass within the last minute (the failed job's own segments may
      // have been freed since: an exit reaps them at once)
      boolean outOfSpace = a.mount() != null && lastOutOfSpace.containsKey(a.mount().dev());
      if (outOfSpace && HealthScope.of(a.mount()) == HealthScope.NODE) {
        // the node's: its tmpfs is out of room for an NCCL segment; the mount may be grown
        if (a.mount() != null && fresh.stream().noneMatch(m -> m.dev().equals(a.mount().dev()))) {
          fresh.add(a.mount());
        }
        sink.accept(remount.noteOn(SegmentAlert.of(EventKind.ALLOCATION_FAILED, "failed NCCL allocation:", a, f.explanation())
            .with("SHM_FREE_BYTES", u == null ? null : u.freeBytes())
            .with("SHM_SIZE_BYTES", u == null ? null : u.sizeBytes()), a.mount()));
        continue;
      }
      // The mount has room, or is a user's own: the empty file is its owner's matter, said at most
      // once an interval per owner.
      long uid = Integer.toUnsignedLong(a.segment().uid());
      OwnerRate.Turn turn = ownerRate.next(uid, now);
      if (!turn.say()) {
        continue;
      }
      String why = f.explanation() + (outOfSpace ? "" : "; the mount has room for any NCCL segment of default size")
          + "; uid " + uid + "'s own file, not the node's" + (turn.unsaid() == 0 ? "" : "; " + turn.unsaid() + " more of uid " + uid
          + "'s since the last such event, not reported one by one")
          + " (at most one such event per owner every " + Durations.human(OwnerRate.INTERVAL) + ")";
      sink.accept(HealthScope.ownersFile(SegmentAlert.of(EventKind.ALLOCATION_FAILED, "failed NCCL allocation:", a, why)
          .with("SHM_FREE_BYTES", u == null ? null : u.freeBytes())
          .with("SHM_SIZE_BYTES", u == null ? null : u.sizeBytes())
          .with("SHM_UNREPORTED", turn.unsaid()), a.mount(), a.segment().uid()));
    }
    reportedFailures = failures;
    freshFailures = List.copyOf(fresh);
    return step.changes();
  }

  /** The mounts where the last {@link #report} raised a failed NCCL allocation, each once. */
  List<ShmMount> failedAllocations() {
    return freshFailures;
  }

  CapacityLevel level(org.shmguard.model.Dev dev) {
    return watch.level(dev);
  }

  /**
   * An event about one mount: how full it is, and what fills it: its largest files whatever their
   * names (the reapable names a pass examined, the largest others its listing kept, and the hidden
   * ones: unlinked but still mapped), {@code capacity.topHolders} of them, each with its holders
   * or, when none is left, its last holders ({@link MountFillers}). About a mount that is its
   * owner's, it says whose and is at most a notice ({@link HealthScope}).
   */
  Alert mountAlert(EventKind kind, MountReport r, Judgement j, double usedPercent, String message) {
    var m = r.mount();
    var u = m.usage();
    Snapshot snap = j.snapshot();
    List<MountFillers.Filler> largest = MountFillers.of(r, j, topHolders);
    StringBuilder text = new StringBuilder(message);
    if (HealthScope.of(m) == HealthScope.OWNER) {
      text.append(" (").append(HealthScope.whose(m)).append(", not the node's)");
    }
    if (u != null) {
      text.append(": ").append(Bytes.human(u.usedBytes())).append(" of ").append(Bytes.human(u.sizeBytes())).append(" used");
    }
    text.append(u == null ? ": " : ", ").append(Counts.of(r.segments(), "file"));
    if (r.hiddenBytes() > 0) {
      text.append(", ").append(Bytes.human(r.hiddenBytes())).append(" hidden (unlinked, still mapped)");
    }
    for (int i = 0; i < largest.size(); i++) {
      text.append(i == 0 ? "; largest: " : "; ").append(largest.get(i).text());
    }
    Alert a = Alert.of(kind, text.toString())
        .with("SHM_MOUNT", m.displayName())
        .with("SHM_CONTAINER", m.container())
        .with("SHM_USED_PERCENT", String.format("%.1f", usedPercent))
        .with("SHM_BYTES", u == null ? null : u.usedBytes())
        .with("SHM_SIZE_BYTES", u == null ? null : u.sizeBytes())
        .with("SHM_FREE_BYTES", u == null ? null : u.freeBytes())
        .with("SHM_SEGMENTS", r.segments())
        .with("SHM_HIDDEN_BYTES", r.hiddenBytes());
    for (MountFillers.Filler l : largest) {
      a = a.with("SHM_LARGEST_FILE", l.name()).with("SHM_LARGEST_BYTES", l.bytes());
    }
    // Who holds the hidden bytes, largest first, then who holds the largest files: at most topHolders.
    Set<Integer> named = new LinkedHashSet<>();
    for (MountReport.Hidden h : r.hidden()) {
      named.addAll(h.pids());
    }
    for (MountFillers.Filler l : largest) {
      named.addAll(l.pids());
    }
    int n = 0;
    for (int pid : named) {
      if (n++ >= topHolders) {
        break;
      }
      ProcessInfo p = snap.processes().get(pid);
      a = a.with("SHM_HOLDER_PID", pid).with("SHM_HOLDER_COMM", p == null || !p.known() ? "?" : p.command());
    }
    return HealthScope.tag(a, m);
  }

  /** "pid 1234 (python)", or "pid 1234" for a process whose command was never read. */
  static String name(int pid, ProcessInfo p) {
    return MountFillers.name(pid, p);
  }
}
