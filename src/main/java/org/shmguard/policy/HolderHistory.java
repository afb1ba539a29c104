package org.shmguard.policy;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/**
 * The holders the daemon has seen for each visible segment, across passes. It lets a segment be
 * reaped as soon as every process that held it has exited, without waiting out the grace period,
 * and it is the evidence ("last held by ...") logged with each reap. Immutable: each pass makes
 * the next one.
 *
 * <p>Only holders whose exit is evidence about the file's job are recorded ({@link
 * JobEvidence#holderCounts}): an O_PATH lookup, or another user's process that could only read
 * the file, is never one of "every process that held it", so its exit reaps nothing; a file only
 * such processes held waits out its grace.
 *
 * <p>Bounded: it remembers only segments the latest pass kept (at most reap.examineLimit per
 * mount), and at most {@link #MAX_HOLDERS} holders of each. A segment seen with more holders than
 * that is remembered as "too many to follow": it never takes the fast path, and waits out its
 * grace like a segment never seen held.
 *
 * <p>It also keeps, per tmpfs, the processes of the containers last found showing it at their
 * /dev/shm ({@link #containerProcesses}): once a container has ended, the evidence that every
 * writer of its volume has exited (WritersGone).
 */
public final class HolderHistory {
  /** The most holders remembered per segment; beyond it the fast path is off for that segment. */
  static final int MAX_HOLDERS = 64;
  private static final HolderHistory EMPTY = new HolderHistory(Map.of(), Set.of(), Map.of(), Map.of());
  private final Map<FileKey, List<ProcessInfo>> lastHolders;
  /** Segments seen with more than MAX_HOLDERS holders: the list above names only some of them. */
  private final Set<FileKey> partial;

  /**
   * Per tmpfs: every process discovery last listed in the containers that show it at /dev/shm,
   * kept while it is watched as another origin (the container ended): policy.WritersGone's evidence.
   */
  private final Map<Dev, List<Integer>> containerProcesses;
  /** Per tmpfs: the container last found showing it at /dev/shm, kept while it is watched as another origin. */
  private final Map<Dev, String> containers;

  private HolderHistory(Map<FileKey, List<ProcessInfo>> lastHolders, Set<FileKey> partial,
      Map<Dev, List<Integer>> containerProcesses, Map<Dev, String> containers) {
    this.lastHolders = lastHolders;
    this.partial = partial;
    this.containerProcesses = containerProcesses;
    this.containers = containers;
  }

  /**
   * The container (or pod) last seen showing the tmpfs on {@code dev} at its /dev/shm, or null:
   * what a reap on its volume after it ended names (SHM_CONTAINER), when the mount itself no longer
   * says.
   */
  public String lastContainer(Dev dev) {
    return containers.get(dev);
  }

  /**
   * The processes of the containers last seen showing the tmpfs on {@code dev} at their /dev/shm,
   * when discovery listed every one of them; null when no such container was seen, or its list was
   * not complete.
   */
  public List<Integer> containerProcesses(Dev dev) {
    return containerProcesses.get(dev);
  }

  public static HolderHistory empty() {
    return EMPTY;
  }

  /** The processes last seen holding {@code key}; empty if none were ever seen. */
  public List<ProcessInfo> lastHolders(FileKey key) {
    return lastHolders.getOrDefault(key, List.of());
  }

  /**
   * The holders of {@code key} when every one is known (not "too many to follow"): the evidence a
   * restart may carry over; empty otherwise.
   */
  public List<ProcessInfo> completeHolders(FileKey key) {
    return partial.contains(key) ? List.of() : lastHolders(key);
  }

  /** This history with {@code more} added for the segments it knows nothing of (what a restart brought back). */
  HolderHistory with(Map<FileKey, List<ProcessInfo>> more) {
    if (more.isEmpty()) {
      return this;
    }
    Map<FileKey, List<ProcessInfo>> next = new HashMap<>(more);
    next.putAll(lastHolders);
    return new HolderHistory(Map.copyOf(next), partial, containerProcesses, containers);
  }

  /**
   * True when holders were seen earlier and every one of them has exited since: its pid is gone,
   * or now belongs to a process that started later. A holder that is alive but let go does not count.
   */
  public boolean allHoldersExited(FileKey key, Snapshot now) {
    List<ProcessInfo> seen = lastHolders.get(key);
    if (seen == null || seen.isEmpty() || partial.contains(key)) {
      return false;
    }
    for (ProcessInfo p : seen) {
      if (now.isAlive(p.pid())) {
        ProcessInfo current = now.processes().get(p.pid());
        boolean reused = current != null && current.startTicks() != p.startTicks() && p.startTicks() >= 0;
        if (!reused) {
          return false;
        }
      }
    }
    return true;
  }

  /** The history after {@code snapshot}: current holders recorded, vanished segments forgotten. */
  public HolderHistory next(Snapshot snapshot) {
    Map<FileKey, List<ProcessInfo>> next = new HashMap<>();
    Set<FileKey> nextPartial = new HashSet<>();
    for (Segment s : snapshot.segments()) {
      FileKey key = s.key();
      List<HolderRef> refs = snapshot.holders().holders(key);
      Map<Integer, ProcessInfo> byPid = new LinkedHashMap<>();
      boolean more = false;
      for (HolderRef r : refs) {
        ProcessInfo info = snapshot.processes().get(r.pid());
        ProcessInfo who = info != null && info.known() ? info : earlier(key, r.pid());
        if (!JobEvidence.holderCounts(r, who, s)) {
          continue; // a lookup, or another user's reader: its exit proves nothing about the job
        }
        if (byPid.size() == MAX_HOLDERS && !byPid.containsKey(r.pid())) {
          more = true;
          break;
        }
        byPid.putIfAbsent(r.pid(), who);
      }
      if (!byPid.isEmpty()) {
        next.put(key, List.copyOf(byPid.values()));
        if (more) {
          nextPartial.add(key);
        }
      } else if (lastHolders.containsKey(key)) {
        next.put(key, lastHolders.get(key));
        if (partial.contains(key)) {
          nextPartial.add(key);
        }
      }
    }
    return new HolderHistory(Map.copyOf(next), Set.copyOf(nextPartial), nextContainerProcesses(snapshot),
        nextContainers(snapshot));
  }

  private Map<Dev, String> nextContainers(Snapshot snapshot) {
    Map<Dev, String> next = new HashMap<>();
    for (ShmMount m : snapshot.mounts()) {
      if (m.origin().ofContainer() && m.container() != null) {
        if (m.mayAct()) { // a user's own namespaces are many, and never reaped in anyway
          next.put(m.dev(), m.container());
        }
      } else if (m.origin() != MountOrigin.HOST && containers.containsKey(m.dev())) {
        next.put(m.dev(), containers.get(m.dev()));
      }
    }
    return Map.copyOf(next);
  }

  private Map<Dev, List<Integer>> nextContainerProcesses(Snapshot snapshot) {
    Map<Dev, List<Integer>> next = new HashMap<>();
    for (ShmMount m : snapshot.mounts()) {
      if (m.origin().ofContainer() && !m.pids().isEmpty()) {
        // only mounts it may act on: a user's own namespaces are many, and never reaped in anyway
        if (m.mayAct() && m.pids().size() < ShmMount.PIDS_LISTED) {
          next.put(m.dev(), m.pids());
        }
      } else if (m.origin() != MountOrigin.HOST && containerProcesses.containsKey(m.dev())) {
        next.put(m.dev(), containerProcesses.get(m.dev()));
      }
    }
    return Map.copyOf(next);
  }

  /**
   * What an earlier pass knew of {@code pid} holding {@code key} (its command and owner), for a
   * holder whose details this pass could not read; a bare placeholder ("pid N") if none did.
   */
  private ProcessInfo earlier(FileKey key, int pid) {
    for (ProcessInfo p : lastHolders.getOrDefault(key, List.of())) {
      if (p.pid() == pid && p.known()) {
        return p;
      }
    }
    return new ProcessInfo(pid, "?", -1, null, null, -1);
  }

  public int size() {
    return lastHolders.size();
  }
}
