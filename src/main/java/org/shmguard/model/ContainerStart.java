package org.shmguard.model;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A container that is starting, as its runtime's OCI hook describes it: the runtime's id for it,
 * the pid of its first process (still the runtime's, before the job runs), the GPUs it asks for,
 * and where its root filesystem is mounted in its own mount namespace (the bundle's
 * {@code root.path}: before pivot_root, its /dev/shm is mounted under it).
 *
 * @param rootfs an absolute path, or null when the process has its own root already
 */
public record ContainerStart(String id, int pid, int gpus, String rootfs) {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");

  public ContainerStart {
    Objects.requireNonNull(id, "id");
    if (!ID.matcher(id).matches()) {
      throw new IllegalArgumentException("container must be a runtime's container id (letters, digits, '_', '.', '-'; at most 128)");
    }
    if (pid < 2) {
      throw new IllegalArgumentException("pid must be a process id above 1, not " + pid);
    }
    if (gpus < 1) {
      throw new IllegalArgumentException("gpus must be at least 1, not " + gpus);
    }
    if (rootfs != null && (!rootfs.startsWith("/") || rootfs.contains("/../") || rootfs.endsWith("/..") || rootfs.contains("\0"))) {
      throw new IllegalArgumentException("root must be an absolute path without '..'");
    }
  }

  /** The id as people see it: its first 12 characters. */
  public String shortId() {
    return id.length() <= 12 ? id : id.substring(0, 12);
  }
}
