package org.shmguard.metrics;

import org.shmguard.model.ShmMount;
import org.shmguard.policy.HealthScope;

/**
 * The labels an operator filters shm metrics by: the mount point as its users see it, the
 * container or Kubernetes pod it belongs to ("" for the host's own), and whose health it counts
 * for ({@link HealthScope}): {@code scope="node"}, or {@code scope="owner"} with the {@code
 * owner_uid} of the user whose own namespace it is. Alerting rules that page select
 * {@code scope="node"}.
 */
record MountLabels(String mount, String container, String pod, String scope, String ownerUid) {
  static final String[] NAMES = {"mount", "container", "pod", "scope", "owner_uid"};
  static final MountLabels DAEMON = new MountLabels("", "", "", HealthScope.NODE.label(), "");

  static MountLabels of(ShmMount m) {
    if (m == null) {
      return DAEMON;
    }
    String owner = m.container() == null ? "" : m.container();
    // ContainerLabel names a pod "pod:<uid>"; anything else is a container runtime's id or a job.
    boolean pod = owner.startsWith("pod:");
    return new MountLabels(m.mountPoint(), pod ? "" : owner, pod ? owner.substring(4) : "", HealthScope.of(m).label(),
        HealthScope.ownerUid(m));
  }

  /** The label names followed by one more, for a metric split by mount and something else. */
  static String[] namesAnd(String extra) {
    String[] names = java.util.Arrays.copyOf(NAMES, NAMES.length + 1);
    names[NAMES.length] = extra;
    return names;
  }

  /**
   * Labels from what an alert names: its mount (a display name, "container:/dev/shm" for a
   * container's), its container, and its SHM_SCOPE and SHM_OWNER_UID (absent: the node's).
   */
  static MountLabels of(String mount, String container, String scope, String ownerUid) {
    String owner = container == null ? "" : container;
    String point = mount == null ? "" : mount;
    if (!owner.isEmpty() && point.startsWith(owner + ":")) {
      point = point.substring(owner.length() + 1);
    }
    boolean pod = owner.startsWith("pod:");
    return new MountLabels(point, pod ? "" : owner, pod ? owner.substring(4) : "",
        scope == null ? HealthScope.NODE.label() : scope, ownerUid == null ? "" : ownerUid);
  }

  String[] values() {
    return new String[] {mount, container, pod, scope, ownerUid};
  }

  String[] with(String value) {
    return new String[] {mount, container, pod, scope, ownerUid, value};
  }
}
