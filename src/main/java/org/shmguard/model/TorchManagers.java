package org.shmguard.model;

import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The live {@code torch_shm_manager} processes one pass found, and whom each serves: PyTorch's
 * file_system sharing strategy registers every named {@code torch_*} file with its job's manager,
 * which unlinks them all about 2 s after its last client has disconnected. The decide stage weighs
 * these (see {@code policy.WaitingInJob}); this record only says what the host showed.
 *
 * <pre>{@code
 * TorchManagers found = snapshot.torchManagers();
 * found.managers().forEach(m -> ...);   // m.uid(), m.clients(), m.servesAtShm(dev)
 * }</pre>
 *
 * @param looked whether the pass looked for managers at all (it does only when some unheld file
 *     could be one of theirs); when false, nothing is known and no file waits on a manager
 * @param managers every live manager found
 * @param problem why some live process could not be read (a manager may have been missed), or null
 */
public record TorchManagers(boolean looked, List<Manager> managers, String problem) {
  private static final TorchManagers NONE = new TorchManagers(false, List.of(), null);

  public TorchManagers {
    managers = List.copyOf(managers);
  }

  /** Not looked for: no file waits on a manager. */
  public static TorchManagers none() {
    return NONE;
  }

  /**
   * One live {@code torch_shm_manager}.
   *
   * @param hostPid its pid in shmguard's PID namespace
   * @param uid its filesystem uid (the fourth field of {@code Uid:} in /proc/PID/status), the
   *     owner the files its clients create get
   * @param pidNamespace the inode of its PID namespace, for people
   * @param startTicks its start in clock ticks since boot (field 22 of /proc/PID/stat), -1 unknown:
   *     with its pid, what tells it from a later process
   * @param startNanos when it started, as wall-clock nanoseconds since the epoch; -1 unknown
   * @param socket the path its listening socket is bound to ({@code /tmp/torch-shm-dir-XXXXXX/manager.sock}
   *     in its own mount namespace), or null when it has none
   * @param clients how many clients are connected to it: its accepted connections on that socket
   * @param atShm the devices its mount namespace has at /dev/shm (where it unlinks the names
   *     registered with it); null when its mountinfo could not be read
   */
  public record Manager(int hostPid, int uid, long pidNamespace, long startTicks, long startNanos, String socket, int clients,
      Set<Dev> atShm) {
    public Manager {
      if (clients < 0) {
        throw new IllegalArgumentException("clients must be 0 or more, not " + clients);
      }
      atShm = atShm == null ? null : Set.copyOf(atShm);
    }

    /** Whether its mount namespace has {@code dev} at /dev/shm; true when that is not known. */
    public boolean servesAtShm(Dev dev) {
      return atShm == null || atShm.contains(Objects.requireNonNull(dev, "dev"));
    }
  }
}
