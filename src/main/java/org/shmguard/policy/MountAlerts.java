package org.shmguard.policy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/**
 * The mounts a pass watches, against those of the pass before: {@code mount_added} for each new
 * one, {@code mount_removed} for each gone, saying whether its path stopped answering (then it is
 * watched again once it does) or it went away. No I/O; it remembers the last pass's mounts.
 */
final class MountAlerts {
  private Map<Dev, ShmMount> known = new LinkedHashMap<>();

  /** @param stalledPaths the paths whose walks have not returned (host's {@code PathWalks}) */
  void report(Snapshot snap, Set<String> stalledPaths, Consumer<Alert> sink) {
    Map<Dev, ShmMount> now = new LinkedHashMap<>();
    for (ShmMount m : snap.mounts()) {
      now.put(m.dev(), m);
      if (!known.containsKey(m.dev())) {
        sink.accept(HealthScope.tag(Alert.of(EventKind.MOUNT_ADDED, "watching " + m.displayName() + " (" + m.origin().label()
            + ", device " + m.dev() + (HealthScope.of(m) == HealthScope.OWNER ? ", " + HealthScope.whose(m) + ", report only" : "")
            + ")").with("SHM_MOUNT", m.displayName()).with("SHM_CONTAINER", m.container()), m));
      }
    }
    for (Map.Entry<Dev, ShmMount> e : known.entrySet()) {
      if (!now.containsKey(e.getKey())) {
        ShmMount prev = e.getValue();
        String name = prev.displayName();
        boolean stalled = stalledPaths.contains(prev.path());
        sink.accept(HealthScope.tag(Alert.of(EventKind.MOUNT_REMOVED, "no longer watching " + name + (stalled
            ? ": the path to it is not answering (see mount_stalled); watched again once it does" : ": it went away"))
            .with("SHM_MOUNT", name).with("SHM_CONTAINER", prev.container()), prev));
      }
    }
    known = now;
  }
}
