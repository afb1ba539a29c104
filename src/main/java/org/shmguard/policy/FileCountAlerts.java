package org.shmguard.policy;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.MountContents;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Bytes;
import org.shmguard.text.Counts;

/**
 * One {@code too_many_files} event when a mount's root holds more entries than a pass examines
 * (reap.examineLimit), and nothing more about that mount until it has fallen back to the limit or
 * below: a million files is one event, not one per pass.
 */
final class FileCountAlerts {
  private Set<Dev> over = new HashSet<>();

  void report(Snapshot snap, Consumer<Alert> sink) {
    Set<Dev> now = new HashSet<>();
    for (ShmMount m : snap.mounts()) {
      MountContents c = snap.contents(m.dev());
      if (c == null || c.entries() <= c.limit()) {
        continue;
      }
      now.add(m.dev());
      if (!over.contains(m.dev())) {
        sink.accept(alert(m, c));
      }
    }
    over = now;
  }

  static Alert alert(ShmMount m, MountContents c) {
    String message = m.displayName() + " holds " + Counts.of(c.entries(), "entry") + " (" + Counts.of(c.files(), "file") + ", "
        + Bytes.human(c.fileBytes()) + "), more than reap.examineLimit (" + c.limit() + "); " + c.matching()
        + (c.matching() == 1 ? " has a reapable name, " : " have reapable names, ") + c.unexamined()
        + " of them wait for a later pass; memory stays bounded, passes take longer";
    return HealthScope.tag(Alert.of(EventKind.TOO_MANY_FILES, message)
        .with("SHM_MOUNT", m.displayName())
        .with("SHM_CONTAINER", m.container())
        .with("SHM_FILES", c.entries())
        .with("SHM_FILE_BYTES", c.fileBytes())
        .with("SHM_MATCHING", c.matching())
        .with("SHM_UNEXAMINED", c.unexamined())
        .with("SHM_LIMIT", c.limit()), m);
  }
}
