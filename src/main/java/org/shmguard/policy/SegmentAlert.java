package org.shmguard.policy;

import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.text.Bytes;
import org.shmguard.text.Durations;

/**
 * The event about one segment, with its evidence: size, kind, age, verdict, and the holders it
 * had. One shape for every event about a segment (reaped, leaked, a failed reap, a failed NCCL
 * allocation), whoever raises it.
 *
 * <pre>{@code
 * Alert a = SegmentAlert.of(EventKind.SEGMENT_REAPED, "reaped", assessment, outcome.detail());
 * }</pre>
 */
public final class SegmentAlert {
  private SegmentAlert() {}

  public static Alert of(EventKind kind, String verb, Assessment a, String why) {
    Segment s = a.segment();
    String mount = a.mount() == null ? "?" : a.mount().displayName();
    Alert alert = Alert.of(kind, verb + " " + mount + "/" + s.displayName() + " (" + Bytes.human(s.allocatedBytes()) + ", "
            + a.kind() + ", age " + Durations.human(a.age()) + "): " + why)
        .with("SHM_MOUNT", mount)
        .with("SHM_SEGMENT", s.displayName())
        .with("SHM_BYTES", s.allocatedBytes())
        .with("SHM_SIZE", s.sizeBytes())
        .with("SHM_KIND", a.kind())
        .with("SHM_VERDICT", a.verdict() == Verdict.FAILED_CREATION ? "failed-creation" : a.verdict().label())
        .with("SHM_AGE_SECONDS", a.age().toSeconds())
        .with("SHM_REASON", why)
        .with("SHM_CONTAINER", a.mount() != null && a.mount().container() != null ? a.mount().container()
            : a.formerContainer());
    for (ProcessInfo p : a.lastHolders()) {
      alert = alert.with("SHM_HOLDER_PID", p.pid()).with("SHM_HOLDER_COMM", p.command());
      if ((a.mount() == null || a.mount().container() == null) && a.formerContainer() == null) {
        alert = alert.with("SHM_CONTAINER", p.container());
      }
    }
    return HealthScope.tag(alert, a.mount());
  }
}
