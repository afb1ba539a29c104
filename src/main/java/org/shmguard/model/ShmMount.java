package org.shmguard.model;

import java.util.List;
import java.util.Objects;

/**
 * One watched tmpfs, identified by its device. {@code path} is where shmguard reaches it from its
 * own namespace (a host path or /proc/PID/root/dev/shm); {@code mountPoint} is where its users see it.
 *
 * @param pids processes of the namespace the mount was found through, for reaching it and for nsenter
 */
public record ShmMount(
    Dev dev,
    String path,
    String mountPoint,
    MountOrigin origin,
    String options,
    String namespace,
    List<Integer> pids,
    String container,
    Usage usage) {

  public ShmMount {
    Objects.requireNonNull(dev, "dev");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(mountPoint, "mountPoint");
    Objects.requireNonNull(origin, "origin");
    options = options == null ? "" : options;
    pids = List.copyOf(pids == null ? List.of() : pids);
  }

  public ShmMount withUsage(Usage newUsage) {
    return new ShmMount(dev, path, mountPoint, origin, options, namespace, pids, container, newUsage);
  }

  /** How a person names this mount: the path they would type, with the container where it has one. */
  public String displayName() {
    return container == null || origin == MountOrigin.HOST ? path : container + ":" + mountPoint;
  }

  /** Capacity from statvfs; null when the mount could not be measured. */
  public record Usage(long sizeBytes, long usedBytes, long freeBytes, long inodes, long freeInodes) {
    public double usedFraction() {
      return sizeBytes <= 0 ? 0 : (double) usedBytes / sizeBytes;
    }
  }
}
