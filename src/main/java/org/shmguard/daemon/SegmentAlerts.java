package org.shmguard.daemon;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.Engine;
import org.shmguard.model.FileKey;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.SegmentAlert;
import org.shmguard.remedy.ReapOutcome;

/**
 * Turns one pass's reaping into events: each reap with its evidence, each leaked segment that
 * was not reaped (dry run, a blocked pass, a failure) once, and an incomplete /proc pass once
 * per stretch of incomplete passes.
 */
final class SegmentAlerts {
  private Set<FileKey> reportedLeaks = new HashSet<>();
  private Set<FileKey> reportedFailures = new HashSet<>();
  private boolean blocked;

  void report(Engine.Pass pass, AlertSink sink) {
    var j = pass.judgement();
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
            sink.emit(describe(EventKind.SEGMENT_LEAKED, "leaked (dry run, not reaped)", a, o.detail()));
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

  private static Alert describe(EventKind kind, String verb, Assessment a, String why) {
    return SegmentAlert.of(kind, verb, a, why);
  }
}
