package org.shmguard.model;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Every live process that may be the creator a file name gives by pid: for each pid read from an
 * unheld file's name, the live processes that have that pid in their own PID namespace (the last
 * field of {@code NSpid:} in /proc/PID/status), whatever that namespace is, with when each started
 * and which devices its mount namespace shows. The decide stage judges a name's pid against these
 * (see {@code policy.CreatorEvidence}); only the pids in {@link #asked} were looked up.
 *
 * <pre>{@code
 * CreatorCandidates c = snapshot.creators();
 * if (c.answers(45)) { c.of(45).forEach(...); }   // every live "pid 45" of every PID namespace
 * }</pre>
 *
 * @param asked the pids looked up; for any other pid nothing is known
 * @param byPid for each asked pid, the live processes that have it in their own PID namespace
 * @param problem why the lookup missed some process (so that no pid can be proved absent), or null
 */
public record CreatorCandidates(Set<Integer> asked, Map<Integer, List<Candidate>> byPid, String problem) {
  private static final CreatorCandidates NONE = new CreatorCandidates(Set.of(), Map.of(), null);

  public CreatorCandidates {
    asked = Set.copyOf(asked);
    byPid = Map.copyOf(byPid);
    for (Integer pid : byPid.keySet()) {
      if (!asked.contains(pid)) {
        throw new IllegalArgumentException("candidates for pid " + pid + ", which was not asked");
      }
    }
  }

  /** Nothing looked up: every pid is unknown, and no creator can be proved dead. */
  public static CreatorCandidates none() {
    return NONE;
  }

  /** Whether {@code pid} was looked up by a lookup that saw every process. */
  public boolean answers(int pid) {
    return problem == null && asked.contains(pid);
  }

  /** The live processes with {@code pid} in their own PID namespace; empty when there is none (or it was not asked). */
  public List<Candidate> of(int pid) {
    return byPid.getOrDefault(pid, List.of());
  }

  /**
   * One live process with the asked pid in its own PID namespace.
   *
   * @param hostPid its pid in shmguard's PID namespace (equal to the asked pid when that is its own)
   * @param pidNamespace the inode of its own PID namespace (/proc/PID/ns/pid)
   * @param ownNamespace whether that is shmguard's PID namespace
   * @param startTicks its start in clock ticks since boot (field 22 of /proc/PID/stat), -1 unknown
   * @param startNanos the same as wall-clock nanoseconds since the epoch, -1 unknown
   * @param devices the devices its mount namespace's mountinfo lists; null when it could not be read
   * @param atShm of those, the ones mounted at /dev/shm; null when not known
   * @param uids its real, effective, saved and filesystem uids (the Uid: line of /proc/PID/status,
   *     as the host's user namespace maps them); null when not read
   */
  public record Candidate(int hostPid, long pidNamespace, boolean ownNamespace, long startTicks, long startNanos,
      Set<Dev> devices, Set<Dev> atShm, Set<Integer> uids) {
    public Candidate {
      devices = devices == null ? null : Set.copyOf(devices);
      atShm = atShm == null ? null : Set.copyOf(atShm);
      uids = uids == null ? null : Set.copyOf(uids);
    }

    /** A candidate whose uids were not read. */
    public Candidate(int hostPid, long pidNamespace, boolean ownNamespace, long startTicks, long startNanos,
        Set<Dev> devices, Set<Dev> atShm) {
      this(hostPid, pidNamespace, ownNamespace, startTicks, startNanos, devices, atShm, null);
    }

    /** A candidate whose mount namespace's /dev/shm was not told apart from its other mounts. */
    public Candidate(int hostPid, long pidNamespace, boolean ownNamespace, long startTicks, long startNanos,
        Set<Dev> devices) {
      this(hostPid, pidNamespace, ownNamespace, startTicks, startNanos, devices, null, null);
    }

    /**
     * Whether its mount namespace has {@code dev} mounted at /dev/shm, where shm_open makes a
     * name; true when that is not known.
     */
    public boolean hasAtShm(Dev dev) {
      return atShm == null || atShm.contains(Objects.requireNonNull(dev, "dev"));
    }

    /** Whether its mount namespace shows a mount of {@code dev}; true when that is not known. */
    public boolean mayReach(Dev dev) {
      return devices == null || devices.contains(Objects.requireNonNull(dev, "dev"));
    }
  }
}
