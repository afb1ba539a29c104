package org.shmguard.policy;

import java.util.List;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/**
 * Whether every writer of a container's or a pod's volume has exited, on the kernel's evidence:
 * the state a pod's emptyDir is in between a crash and the next start, when whatever the crashed
 * engine left can only be waste.
 *
 * <pre>{@code
 * String why = WritersGone.of(mount, snap, history);   // null unless proved
 * }</pre>
 *
 * <p>It holds for a mount only when all of these do:
 * <ul>
 *   <li>it is a container's volume: one its runtime mounted on the host (a kubelet emptyDir,
 *       {@link MountOrigin#VOLUME}), or one discovery found at /dev/shm of another mount namespace,
 *       now or in an earlier pass of this daemon ({@link HolderHistory#containerProcesses}); where
 *       a container showed it at /dev/shm, discovery listed every process of the namespaces that
 *       show it (fewer than {@link ShmMount#PIDS_LISTED}). Never the host's /dev/shm, nor a tmpfs
 *       only configured and never seen in a container (any host process may open a file there by
 *       path);
 *   <li>every one of those processes has exited: a container's processes end with its first one,
 *       which such a list holds;
 *   <li>the /proc pass read every process;
 *   <li>no process on the host, in any namespace, holds an fd or a mapping of any file on it
 *       (visible or unlinked), and no O_PATH fd of an unknown device may be one.
 * </ul>
 * This only lets a family call an unheld file leaked at once and reap it by default (each family
 * says whether: {@link org.shmguard.policy.family.SegmentFamily#reapedOnceWritersGone}); a name's
 * creator must still be provably dead where the name gives one, and the reap's confirming pass and
 * write lease still refuse any file someone opens.
 */
public final class WritersGone {
  private WritersGone() {}

  /**
   * Whether {@code mount} may ever be a volume whose every writer has exited: never the host's
   * /dev/shm (nor /run/shm), which host processes share, whatever found it.
   */
  public static boolean possibleOn(ShmMount mount) {
    if (mount == null || mount.origin() == MountOrigin.HOST) {
      return false;
    }
    return mount.origin() == MountOrigin.NAMESPACE
        || !(mount.mountPoint().equals("/dev/shm") || mount.mountPoint().equals("/run/shm"));
  }

  /** The reason's clause when every writer of {@code mount} has exited, or null when that is not proved. */
  public static String of(ShmMount mount, Snapshot snap, HolderHistory history) {
    if (!possibleOn(mount) || !snap.complete()) {
      return null;
    }
    List<Integer> pids;
    if (mount.origin().ofContainer() && !mount.pids().isEmpty()) {
      pids = mount.pids().size() >= ShmMount.PIDS_LISTED ? null : mount.pids();
    } else if (mount.origin() == MountOrigin.VOLUME) {
      // a pod's or container's volume where its runtime mounted it, and no container shows it now
      pids = history.containerProcesses(mount.dev()) == null ? List.of() : history.containerProcesses(mount.dev());
    } else {
      pids = mount.origin() == MountOrigin.NAMESPACE ? null : history.containerProcesses(mount.dev());
    }
    if (pids == null) {
      return null;
    }
    for (int pid : pids) {
      if (snap.isAlive(pid)) {
        return null;
      }
    }
    if (snap.holders().heldOnDevice(mount.dev())) {
      return null;
    }
    return "every writer of this volume has exited: no process holds any file on it and no process of the "
        + "container that mounted it at /dev/shm is left";
  }
}
