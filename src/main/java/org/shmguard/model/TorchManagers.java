package org.shmguard.model;

import java.util.List;
import java.util.Map;
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
 * @param problem why some live process could not be read at all, not even whose it is (a manager
 *     of anyone may have been missed), or null
 * @param missedByUid for each uid, why a manager running as that uid was not read whole (it could
 *     not be read, or it was beyond what one pass examines for that uid): only that uid's files can
 *     have been its, so only they wait on it
 */
public record TorchManagers(boolean looked, List<Manager> managers, String problem, Map<Integer, String> missedByUid) {
  private static final TorchManagers NONE = new TorchManagers(false, List.of(), null, Map.of());

  public TorchManagers {
    managers = List.copyOf(managers);
    missedByUid = Map.copyOf(missedByUid);
  }

  /** Managers found, and a problem that concerns every uid's files (or none). */
  public TorchManagers(boolean looked, List<Manager> managers, String problem) {
    this(looked, managers, problem, Map.of());
  }

  /**
   * Why a manager that may hold a file of {@code uid} was missed, or null: a process whose owner
   * could not be read concerns every uid; a manager read as another uid concerns none of these files.
   */
  public String missedFor(int uid) {
    return problem != null ? problem : missedByUid.get(uid);
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
