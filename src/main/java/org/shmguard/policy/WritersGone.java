package org.shmguard.policy;

import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/**
 * Whether every writer of a volume has exited, on the kernel's evidence in one snapshot: the
 * state a pod's emptyDir or a container's shm is in between a crash and the next start, when
 * whatever the crashed engine left can only be waste.
 *
 * <pre>{@code
 * String why = WritersGone.of(mount, snap);   // null unless proved
 * }</pre>
 *
 * <p>It holds for a mount only when all of these do:
 * <ul>
 *   <li>it is a volume, not the /dev/shm of shmguard's own mount namespace (the host's, which
 *       every host process opens names in with shm_open): a tmpfs found in another mount
 *       namespace's /dev/shm, or one configured at any other mount point. shm_open and the
 *       engines that name their segments reach only /dev/shm, so only the processes of the
 *       containers that mount the volume there can open one of its names;
 *   <li>the /proc pass read every process;
 *   <li>no process on the host, in any namespace, holds an fd or a mapping of any file on it
 *       (visible or unlinked), and no O_PATH fd of an unknown device may be one;
 *   <li>no process of a container found showing it at /dev/shm is left: found in another mount
 *       namespace, discovery must have listed every process of the namespaces that show it
 *       (fewer than {@link ShmMount#PIDS_LISTED}), and every one has exited. A container's
 *       processes end with its first one, which such a list holds.
 * </ul>
 * This only lets a family call an unheld file leaked at once and reap it by default (each family
 * says whether: {@link org.shmguard.policy.family.SegmentFamily#reapedOnceWritersGone}); a name's
 * creator must still be provably dead where the name gives one, and the reap's confirming pass and
 * write lease still refuse any file someone opens.
 */
public final class WritersGone {
  private WritersGone() {}

  /** The reason's clause when every writer of {@code mount} has exited, or null when that is not proved. */
  public static String of(ShmMount mount, Snapshot snap) {
    if (mount == null || !isVolume(mount) || !snap.complete()) {
      return null;
    }
    if (mount.origin() == MountOrigin.NAMESPACE) {
      // Every process of the containers found showing it, or nothing is proved: a list as long as
      // discovery keeps may have left out the container's first process, whose end ends them all.
      if (mount.pids().isEmpty() || mount.pids().size() >= ShmMount.PIDS_LISTED) {
        return null;
      }
      for (int pid : mount.pids()) {
        if (snap.isAlive(pid)) {
          return null;
        }
      }
    }
    if (snap.holders().heldOnDevice(mount.dev())) {
      return null;
    }
    return "every writer of this volume has exited: no process holds any file on it"
        + (mount.origin() == MountOrigin.NAMESPACE ? " and no process of the container that mounted it is left" : "");
  }

  /** Whether {@code mount} is a container's or a pod's volume rather than the /dev/shm host processes share. */
  static boolean isVolume(ShmMount mount) {
    if (mount.origin() == MountOrigin.HOST) {
      return false;
    }
    // A configured mount at /dev/shm is the one host processes share, whatever found it.
    return mount.origin() == MountOrigin.NAMESPACE
        || !mount.mountPoint().equals("/dev/shm") && !mount.mountPoint().equals("/run/shm");
  }
}
