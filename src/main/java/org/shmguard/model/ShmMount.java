package org.shmguard.model;

import java.util.List;
import java.util.Objects;

/**
 * One watched tmpfs, identified by its device. {@code path} is where shmguard reaches it from its
 * own namespace (a host path or /proc/PID/root/dev/shm); {@code mountPoint} is where its users see it.
 *
 * @param pids processes of the namespace the mount was found through
 * @param mountId the mount {@code path} was verified to be the root of (mountinfo's first field);
 *     0 when it was never verified, and then nothing is done to it
 * @param mountinfo the mountinfo file that lists {@code mountId}, to read its options from
 * @param reportOnly why shmguard only reports this mount and never reaps in it or remounts it;
 *     null when it may act on it
 * @param ownerUid the uid that made the user namespace owning the mount namespace it was found in
 *     (0 for the host's own); null when unknown. A report-only mount is reported as this user's.
 * @param workload the pod or container whose tmpfs this is, found from where its runtime mounted
 *     it on the host; null when it was not found that way
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
    Usage usage,
    long mountId,
    String mountinfo,
    String reportOnly,
    Long ownerUid,
    Workload workload) {

  /**
   * The most processes {@code pids} lists (discovery's, over every namespace it found the mount in):
   * a list this long may have left some out.
   */
  public static final int PIDS_LISTED = 4;

  public ShmMount {
    Objects.requireNonNull(dev, "dev");
    Objects.requireNonNull(path, "path");
    Objects.requireNonNull(mountPoint, "mountPoint");
    Objects.requireNonNull(origin, "origin");
    options = options == null ? "" : options;
    pids = List.copyOf(pids == null ? List.of() : pids);
    if (mountId < 0) {
      throw new IllegalArgumentException("mountId must not be negative: " + mountId);
    }
    if (ownerUid != null && ownerUid < 0) {
      throw new IllegalArgumentException("ownerUid must not be negative: " + ownerUid);
    }
  }

  public ShmMount(Dev dev, String path, String mountPoint, MountOrigin origin, String options, String namespace,
      List<Integer> pids, String container, Usage usage, long mountId, String mountinfo, String reportOnly, Long ownerUid) {
    this(dev, path, mountPoint, origin, options, namespace, pids, container, usage, mountId, mountinfo, reportOnly, ownerUid,
        null);
  }

  /** A mount that was not verified: shown, never acted on (fixtures, and mounts built by hand). */
  public ShmMount(Dev dev, String path, String mountPoint, MountOrigin origin, String options, String namespace,
      List<Integer> pids, String container, Usage usage) {
    this(dev, path, mountPoint, origin, options, namespace, pids, container, usage, 0, null, null, null);
  }

  public ShmMount withUsage(Usage newUsage) {
    return new ShmMount(dev, path, mountPoint, origin, options, namespace, pids, container, newUsage, mountId, mountinfo,
        reportOnly, ownerUid, workload);
  }

  public ShmMount withPids(List<Integer> newPids) {
    return new ShmMount(dev, path, mountPoint, origin, options, namespace, newPids, container, usage, mountId, mountinfo,
        reportOnly, ownerUid, workload);
  }

  /** This mount, attributed to {@code newWorkload}: its container label becomes the workload's. */
  public ShmMount withWorkload(Workload newWorkload) {
    return new ShmMount(dev, path, mountPoint, origin, options, namespace, pids,
        newWorkload == null ? container : newWorkload.label(), usage, mountId, mountinfo, reportOnly, ownerUid, newWorkload);
  }

  /** Whether shmguard may reap in it and remount it; see {@link #reportOnly()}. */
  public boolean mayAct() {
    return reportOnly == null;
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
