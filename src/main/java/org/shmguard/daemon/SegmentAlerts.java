package org.shmguard.daemon;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.List;
import java.util.Set;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.Engine;
import org.shmguard.model.FileKey;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.SegmentAlert;
import org.shmguard.policy.Bytes;
import org.shmguard.policy.Verdict;
import org.shmguard.policy.Durations;
import org.shmguard.remedy.ReapOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns one pass's reaping into events: each reap with its evidence, each leaked segment that
 * was not reaped (dry run, a blocked pass, a failure) once, and an incomplete /proc pass once
 * per stretch of incomplete passes.
 */
final class SegmentAlerts {
  /** How a dry run's leaked segment is logged: what the daemon would have done. */
  static final String WOULD_REAP = "dry run: would reap";

  private static final Logger LOG = LoggerFactory.getLogger(SegmentAlerts.class);
  private Set<FileKey> reportedLeaks = new HashSet<>();
  /** In a dry run, each examined file's last logged verdict: a verdict is logged when it changes. */
  private Map<FileKey, Verdict> loggedVerdicts = new HashMap<>();
  private Set<FileKey> reportedFailures = new HashSet<>();
  private boolean blocked;

  void report(Engine.Pass pass, AlertSink sink) {
    var j = pass.judgement();
    if (pass.dryRun()) {
      logVerdicts(j);
    }
    Set<FileKey> handled = new HashSet<>();
    Set<FileKey> leaks = new HashSet<>();
    Set<FileKey> failures = new HashSet<>();
    for (ReapOutcome o : pass.outcomes()) {
      Assessment a = o.candidate();
      FileKey key = a.segment().key();
      handled.add(key);
      switch (o.result()) {
        case REAPED -> sink.emit(describe(EventKind.SEGMENT_REAPED, "reaped", a, o.detail()));
        case WOULD_REAP -> {
          leaks.add(key);
          if (!reportedLeaks.contains(key)) {
            sink.emit(describe(EventKind.SEGMENT_LEAKED, WOULD_REAP, a, o.detail()));
          }
        }
        case FAILED -> {
          failures.add(key);
          if (!reportedFailures.contains(key)) {
            sink.emit(describe(EventKind.REAP_FAILED, "could not reap", a, o.detail()));
          }
        }
        case SKIPPED -> {
          // Most skips mean the segment is no longer what was judged (gone, changed, held again);
          // an incomplete confirming pass or unavailable leases leave a leak in place, which the
          // operator should hear of.
          if (o.leftLeaked()) {
            leaks.add(key);
            if (!reportedLeaks.contains(key)) {
              sink.emit(describe(EventKind.SEGMENT_LEAKED, "leaked, not reaped", a, o.detail()));
            }
          }
        }
      }
    }
    List<String> blockers = j.plan().blockers();
    for (Assessment a : j.segments()) {
      FileKey key = a.segment().key();
      if (a.verdict().reapable() && !handled.contains(key)) {
        leaks.add(key);
        if (!reportedLeaks.contains(key)) {
          String why = blockers.isEmpty() ? a.reason() : a.reason() + "; not reaped: " + String.join("; ", blockers);
          sink.emit(describe(EventKind.SEGMENT_LEAKED, "leaked, not reaped", a, why));
        }
      }
    }
    if (!blockers.isEmpty() && !blocked) {
      sink.emit(Alert.of(EventKind.SCAN_INCOMPLETE, "nothing is reaped while the /proc pass is incomplete: "
          + String.join("; ", blockers)).with("SHM_REASON", String.join("; ", blockers)));
    }
    blocked = !blockers.isEmpty();
    reportedLeaks = leaks;
    reportedFailures = failures;
  }

  /**
   * A dry run shows every verdict with its reason, not only the leaks: one log line per file when
   * its verdict changes ("dry run: /dev/shm/nccl-x (9.2M, nccl, age 3s), verdict held: held by pid 4242 (map)"), with the
   * blockers on a leaked one.
   */
  private void logVerdicts(org.shmguard.policy.Judgement j) {
    Map<FileKey, Verdict> now = new HashMap<>();
    for (Assessment a : j.segments()) {
      FileKey key = a.segment().key();
      now.put(key, a.verdict());
      if (loggedVerdicts.get(key) != a.verdict()) {
        String mount = a.mount() == null ? "?" : a.mount().displayName();
        String blockers = a.verdict().reapable() && !j.plan().blockers().isEmpty()
            ? "; not reaped: " + String.join("; ", j.plan().blockers()) : "";
        LOG.info("dry run: {}/{} ({}, {}, age {}), verdict {}: {}{}", mount, a.segment().displayName(),
            Bytes.human(a.segment().allocatedBytes()), a.kind(), Durations.human(a.age()), a.verdict().label(), a.reason(), blockers);
      }
    }
    loggedVerdicts = now;
  }

  private static Alert describe(EventKind kind, String verb, Assessment a, String why) {
    return SegmentAlert.of(kind, verb, a, why);
  }
}
