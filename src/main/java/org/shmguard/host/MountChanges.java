package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.shmguard.model.Dev;
import org.shmguard.nativ.ProcCalls;

/**
 * The daemon's periodic mount rediscovery, paid in proportion to what changed: each call reads
 * what a discovery depends on (every process's mount namespace, and the mountinfo of each
 * namespace as the process discovery would read it through sees it, the host's own, and which
 * walks are stuck) into a SHA-256 digest, and runs the full {@link MountDiscovery} (reachability
 * checks, ownership, every namespace's /dev/shm) only when that digest differs from the one taken
 * before the last full discovery. A quiet host costs one readlink per process and one mountinfo
 * read per namespace.
 *
 * <p>What is not cached, and why: a process's namespace. A process can move to another mount
 * namespace (setns(2), unshare(CLONE_NEWNS)) without changing its pid or start time, and nothing
 * cheaper than the readlink of /proc/PID/ns/mnt tells that it did. A namespace's mounts: a
 * container's runtime mounts its /dev/shm after the namespace exists, so a namespace seen before
 * is read again on every call (its mountinfo, not parsed, only digested).
 *
 * <pre>{@code
 * MountChanges changes = new MountChanges(HostPaths.system(), new MountDiscovery(paths), true, List.of());
 * Set<Dev> devs = changes.devices();   // the full discovery's answer, read again only after a change
 * }</pre>
 */
public final class MountChanges {
  private final HostPaths paths;
  private final MountDiscovery discovery;
  private final boolean auto;
  private final List<String> configured;
  private byte[] digestOfLast;
  private Set<Dev> lastFound;
  private int fullDiscoveries;
  /** Each mount the last full discovery found through processes of a namespace (a container's): the pids it listed. */
  private Map<Dev, List<Integer>> lastListed = Map.of();
  /** Set when a mount still there lost every process listed on it; cleared by {@link #containerEnded}. */
  private boolean containerEnded;

  public MountChanges(HostPaths paths, MountDiscovery discovery, boolean auto, List<String> configured) {
    this.paths = paths;
    this.discovery = discovery;
    this.auto = auto;
    this.configured = List.copyOf(configured);
  }

  /**
   * The devices a full discovery finds now: its last answer when nothing it reads has changed
   * since, else a new discovery's. The digest is taken before the discovery it stands for, so a
   * change made while discovery runs differs from it at the next call.
   */
  public synchronized Set<Dev> devices() {
    byte[] now = digest();
    if (now != null && lastFound != null && Arrays.equals(now, digestOfLast)) {
      return lastFound;
    }
    Set<Dev> devs = new HashSet<>();
    Map<Dev, List<Integer>> listed = new HashMap<>();
    discovery.discover(auto, configured).mounts().forEach(m -> {
      devs.add(m.dev());
      if (!m.pids().isEmpty()) {
        listed.put(m.dev(), m.pids());
      }
    });
    for (Map.Entry<Dev, List<Integer>> before : lastListed.entrySet()) {
      if (devs.contains(before.getKey())
          && Collections.disjoint(before.getValue(), listed.getOrDefault(before.getKey(), List.of()))) {
        containerEnded = true; // a pod's volume outlives its container: the same device, none of its processes
      }
    }
    lastListed = Map.copyOf(listed);
    fullDiscoveries++;
    digestOfLast = now;
    lastFound = Set.copyOf(devs);
    return lastFound;
  }

  /**
   * True, once, when a discovery since the last call found a mount still there but none of the
   * processes the one before listed on it: a container on a pod's volume (or any tmpfs bound in)
   * has ended, and only a full pass can judge whether every writer of the volume has exited.
   * Without it nothing would: the volume's device stays, and the next sweep may be minutes away.
   */
  public synchronized boolean containerEnded() {
    boolean ended = containerEnded;
    containerEnded = false;
    return ended;
  }

  /** How many calls ran the full discovery (for tests and the debug log). */
  public synchronized int fullDiscoveries() {
    return fullDiscoveries;
  }

  /** The digest of what discovery depends on, or null if it cannot be taken (then discovery runs). */
  private byte[] digest() {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      return null;
    }
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      String reference = paths.isSystemRoot() ? "self" : "1";
      mountinfo(proc, reference, md);
      // Each namespace with the lowest pid in it: discovery reads a namespace through its lowest
      // pids, so a change of that pid (an exit) is a change here too.
      TreeMap<Long, Integer> firstPid = new TreeMap<>();
      for (int pid : proc.pids()) {
        long ns = proc.namespaceInode(pid, "mnt");
        firstPid.putIfAbsent(ns, pid); // -errno values included: an unreadable process is part of the state
      }
      for (var e : firstPid.entrySet()) {
        md.update(longBytes(e.getKey()));
        md.update(longBytes(e.getValue()));
        if (e.getKey() >= 0) {
          mountinfo(proc, e.getValue() + "", md);
        }
      }
      for (String stuck : new TreeSet<>(PathWalks.shared().stuckPaths())) {
        md.update(stuck.getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
      }
      return md.digest();
    } catch (IOException e) {
      return null;
    }
  }

  /** Adds the mountinfo of {@code task} ("self", "1", a pid) to the digest, or its errno. */
  private static void mountinfo(ProcCalls proc, String task, MessageDigest md) {
    int length = proc.readLines(task + "/mountinfo", (b, n) -> md.update(b, 0, n));
    md.update(longBytes(length));
  }

  private static byte[] longBytes(long v) {
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) {
      b[i] = (byte) (v >>> (8 * i));
    }
    return b;
  }
}
