package org.shmguard.metrics;

import org.shmguard.model.ShmMount;

/**
 * The labels an operator filters shm metrics by: the mount point as its users see it, and the
 * container or Kubernetes pod it belongs to ("" for the host's own).
 */
record MountLabels(String mount, String container, String pod) {
  static final String[] NAMES = {"mount", "container", "pod"};
  static final MountLabels DAEMON = new MountLabels("", "", "");

  static MountLabels of(ShmMount m) {
    if (m == null) {
      return DAEMON;
    }
    String owner = m.container() == null ? "" : m.container();
    // ContainerLabel names a pod "pod:<uid>"; anything else is a container runtime's id or a job.
    boolean pod = owner.startsWith("pod:");
    return new MountLabels(m.mountPoint(), pod ? "" : owner, pod ? owner.substring(4) : "");
  }

  /** The label names followed by one more, for a metric split by mount and something else. */
  static String[] namesAnd(String extra) {
    return new String[] {NAMES[0], NAMES[1], NAMES[2], extra};
  }

  /**
   * Labels from what an alert names: its mount (a display name, "container:/dev/shm" for a
   * container's) and its container.
   */
  static MountLabels of(String mount, String container) {
    String owner = container == null ? "" : container;
    String point = mount == null ? "" : mount;
    if (!owner.isEmpty() && point.startsWith(owner + ":")) {
      point = point.substring(owner.length() + 1);
    }
    boolean pod = owner.startsWith("pod:");
    return new MountLabels(point, pod ? "" : owner, pod ? owner.substring(4) : "");
  }

  String[] values() {
    return new String[] {mount, container, pod};
  }

  String[] with(String value) {
    return new String[] {mount, container, pod, value};
  }
}
