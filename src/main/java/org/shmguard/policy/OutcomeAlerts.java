package org.shmguard.policy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.FileKey;

/**
 * The one place where what the act stage did becomes events: a pass's reaping, from its
 * judgement and the outcomes of its {@link Action.Reap} (each reap with its evidence, each leaked
 * segment that was not reaped (dry run, a blocked pass, a failure) once, and an incomplete /proc
 * pass once per stretch of incomplete passes), and every remount, planned or asked for by root
 * ({@link #remounted}). No I/O; it remembers what it raised.
 */
public final class OutcomeAlerts {
  /** How a dry run's leaked segment is reported: what the daemon would have done. */
  static final String WOULD_REAP = "dry run: would reap";

  private Set<FileKey> reportedLeaks = new HashSet<>();
  private Set<FileKey> reportedFailures = new HashSet<>();
  private boolean blocked;

  OutcomeAlerts() {}

  /** The event for one remount's outcome: grown, refused (the policy, a dry run) or failed. */
  public static Alert remounted(RemountResult o) {
    EventKind kind = o.grown() ? EventKind.REMOUNT_GROWN : o.failed() ? EventKind.REMOUNT_FAILED : EventKind.REMOUNT_REFUSED;
    Alert a = Alert.of(kind, o.summary());
    return (o.unneeded() ? a.atMost(6) : a)
        .with("SHM_MOUNT", o.mount())
        .with("SHM_SIZE_BEFORE", o.fromBytes())
        .with("SHM_SIZE_AFTER", o.toBytes())
        .with("SHM_OPTIONS_BEFORE", o.optionsBefore())
        .with("SHM_OPTIONS_AFTER", o.optionsAfter())
        .with("SHM_REASON", o.detail());
  }

  /** The event for a file the exit path reaped, with the evidence measured at that reap. */
  public static Alert reaped(ReapResult o) {
    return describe(EventKind.SEGMENT_REAPED, "reaped", o.candidate(), o.detail());
  }

  void report(Judgement j, List<? extends ReapResult> outcomes, Consumer<Alert> sink) {
    Set<FileKey> handled = new HashSet<>();
    Set<FileKey> leaks = new HashSet<>();
    Set<FileKey> failures = new HashSet<>();
    for (ReapResult o : outcomes) {
      Assessment a = o.candidate();
      FileKey key = a.segment().key();
      handled.add(key);
      if (o.reaped()) {
        sink.accept(describe(EventKind.SEGMENT_REAPED, "reaped", a, o.detail()));
      } else if (o.wouldReap()) {
        leaks.add(key);
        if (!reportedLeaks.contains(key)) {
          sink.accept(describe(EventKind.SEGMENT_LEAKED, WOULD_REAP, a, o.detail()));
        }
      } else if (o.failed()) {
        failures.add(key);
        if (!reportedFailures.contains(key)) {
          sink.accept(describe(EventKind.REAP_FAILED, "could not reap", a, o.detail()));
        }
      } else if (o.leftLeaked()) {
        // Most skips mean the segment is no longer what was judged (gone, changed, held again);
        // an incomplete confirming pass or unavailable leases leave a leak in place, which the
        // operator should hear of.
        leaks.add(key);
        if (!reportedLeaks.contains(key)) {
          sink.accept(describe(EventKind.SEGMENT_LEAKED, "leaked, not reaped", a, o.detail()));
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
          sink.accept(describe(EventKind.SEGMENT_LEAKED, "leaked, not reaped", a, why));
        }
      }
    }
    if (!blockers.isEmpty() && !blocked) {
      sink.accept(Alert.of(EventKind.SCAN_INCOMPLETE, "nothing is reaped while the /proc pass is incomplete: "
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
