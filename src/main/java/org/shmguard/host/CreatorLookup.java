package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.Dev;
import org.shmguard.nativ.ProcCalls;

/**
 * Finds, for the pids that unheld files' names give, every live process that has that pid in its
 * own PID namespace, in any PID namespace: the one read a name's pid needs, since a container that
 * shares the host's /dev/shm but not its PID namespace names its files with its own pids.
 *
 * <pre>{@code
 * CreatorCandidates c = new CreatorLookup(HostPaths.system()).find(Set.of(45), pass.livePids(), watchedDevices);
 * }</pre>
 *
 * <p>One readlink of /proc/PID/ns/pid per live process; one raw read of /proc/PID/status
 * ({@code NSpid:}) for a process in another PID namespace than shmguard's; its stat, its ns/mnt
 * and its mount namespace's mountinfo (once per namespace) only for a process that has a pid asked. A process that exits meanwhile is skipped (it
 * is dead); one that cannot be read makes the lookup incomplete, and then no pid is proved absent.
 */
public final class CreatorLookup {
  private final HostPaths paths;

  public CreatorLookup(HostPaths paths) {
    this.paths = paths;
  }

  /**
   * Start times are placed on the kernel's own wall clock (read here, next to /proc/uptime, never
   * a clock a test injects), the clock a file's birth time was read from.
   *
   * @param wanted the pids read from the names of unheld files
   * @param live the processes the /proc pass found alive
   * @param watched the devices of the mounts those files are on: of each candidate's mount
   *     namespace, only these devices are kept
   */
  public CreatorCandidates find(Set<Integer> wanted, BitSet live, Set<Dev> watched) {
    if (wanted.isEmpty()) {
      return new CreatorCandidates(Set.of(), Map.of(), null);
    }
    long bootNanos = ProcessDetails.bootNanos(paths, Instant.now());
    Map<Integer, List<CreatorCandidates.Candidate>> byPid = new HashMap<>();
    Map<Long, Reach> devicesByMountNs = new HashMap<>();
    String problem = null;
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      long ownPidNs = inode(proc.readLink(paths.isSystemRoot() ? "self/ns/pid" : "1/ns/pid"));
      if (ownPidNs < 0) {
        return new CreatorCandidates(wanted, Map.of(), "shmguard cannot read its own PID namespace");
      }
      for (int pid = live.nextSetBit(0); pid >= 0; pid = live.nextSetBit(pid + 1)) {
        long pidNs = proc.namespaceInode(pid, "pid");
        if (pidNs < 0) {
          if (!gone((int) -pidNs)) {
            problem = "cannot read the PID namespace of pid " + pid;
          }
          continue;
        }
        boolean own = pidNs == ownPidNs;
        int inner = own ? pid : innermostPid(proc, pid);
        if (inner == -1) {
          continue; // exited while we looked
        }
        if (inner < 0) {
          problem = "cannot read which pid " + pid + " has in its own PID namespace (NSpid in /proc/" + pid + "/status)";
          continue;
        }
        if (!wanted.contains(inner)) {
          continue;
        }
        // Who it runs as: a process none of whose uids is a file's owner did not make that file.
        // Read again for a candidate in another namespace too: its status was read for NSpid, but
        // the buffer is reused.
        int statusLength = proc.readWholeRecordFile(pid, "status");
        if (statusLength < 0 && gone(-statusLength)) {
          continue; // exited while we looked
        }
        Set<Integer> uids = statusLength < 0 ? null : uids(proc.bytes(), statusLength);
        long ticks = startTicks(pid);
        if (ticks == -1) {
          continue; // exited while we looked
        }
        long start = ProcessDetails.startNanos(bootNanos, ticks);
        long mountNs = proc.namespaceInode(pid, "mnt");
        int reader = pid;
        Reach reach = mountNs < 0 ? null
            : devicesByMountNs.computeIfAbsent(mountNs, ns -> devicesOf(reader, watched));
        byPid.computeIfAbsent(inner, p -> new ArrayList<>())
            .add(new CreatorCandidates.Candidate(pid, pidNs, own, Math.max(ticks, -1), start,
                reach == null ? null : reach.any(), reach == null ? null : reach.atShm(), uids));
      }
    } catch (IOException e) {
      return new CreatorCandidates(wanted, Map.of(), "cannot list " + paths.proc() + ": " + e.getMessage());
    }
    return new CreatorCandidates(wanted, byPid, problem);
  }

  /** The last pid of NSpid in /proc/PID/status, read as bytes: -1 gone, -2 unreadable or absent (a kernel before 4.1). */
  private static int innermostPid(ProcCalls proc, int pid) {
    int length = proc.readWholeRecordFile(pid, "status");
    if (length < 0) {
      return gone(-length) ? -1 : -2;
    }
    return innermostPid(proc.bytes(), length);
  }

  private static final byte[] NSPID = "\nNSpid:".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /** The last pid of the NSpid line of a status text, or -2 when it has none. */
  static int innermostPid(byte[] status, int length) {
    int at = indexOf(status, length, NSPID);
    if (at < 0) {
      return -2;
    }
    long last = -2;
    long v = -1;
    for (int i = at + NSPID.length; i < length && status[i] != '\n'; i++) {
      byte b = status[i];
      if (b >= '0' && b <= '9') {
        v = (v < 0 ? 0 : v * 10) + (b - '0');
        if (v > Integer.MAX_VALUE) {
          return -2;
        }
      } else if (v >= 0) {
        last = v;
        v = -1;
      }
    }
    return (int) (v >= 0 ? v : last);
  }

  /** Every uid a status text's Uid: line gives (real, effective, saved, filesystem), or null when it has none. */
  static Set<Integer> uids(byte[] status, int length) {
    int[] uids = ProcessDetails.uids(new String(status, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1));
    if (uids == null) {
      return null;
    }
    Set<Integer> set = new HashSet<>();
    for (int u : uids) {
      set.add(u);
    }
    return set;
  }

  private static int indexOf(byte[] text, int length, byte[] what) {
    outer:
    for (int i = 0; i + what.length <= length; i++) {
      for (int j = 0; j < what.length; j++) {
        if (text[i + j] != what[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  /** Field 22 of /proc/PID/stat: -1 gone, -2 unreadable. */
  private long startTicks(int pid) {
    try {
      String stat = ProcFiles.readOrNull(paths.proc(Integer.toString(pid), "stat"));
      if (stat == null) {
        return -1;
      }
      long ticks = ProcessDetails.startTicks(stat);
      return ticks < 0 ? -2 : ticks;
    } catch (AccessDeniedException e) {
      return -2;
    }
  }

  /** The watched devices a mount namespace's mountinfo lists, anywhere and at /dev/shm. */
  private record Reach(Set<Dev> any, Set<Dev> atShm) {}

  /** The watched devices the mountinfo of {@code pid}'s mount namespace lists, or null if it cannot be read. */
  private Reach devicesOf(int pid, Set<Dev> watched) {
    Set<Dev> devices = new HashSet<>();
    Set<Dev> atShm = new HashSet<>();
    Set<String> fields = new HashSet<>();
    watched.forEach(d -> fields.add(d.major() + ":" + d.minor()));
    try {
      // Only a line whose third field ("major:minor") is a watched device is parsed.
      boolean read = ProcFiles.forEachLine(paths.proc(Integer.toString(pid), "mountinfo"), line -> {
        int a = line.indexOf(' ');
        int b = a < 0 ? -1 : line.indexOf(' ', a + 1);
        int c = b < 0 ? -1 : line.indexOf(' ', b + 1);
        if (c < 0 || !fields.contains(line.substring(b + 1, c))) {
          return;
        }
        MountEntry e = MountEntry.parse(line);
        if (e != null && watched.contains(e.dev())) {
          devices.add(e.dev());
          if (e.mountPoint().equals("/dev/shm")) {
            atShm.add(e.dev());
          }
        }
      });
      return read ? new Reach(devices, atShm) : null;
    } catch (AccessDeniedException e) {
      return null;
    }
  }

  private static boolean gone(int errno) {
    return errno == ProcCalls.ENOENT || errno == ProcCalls.ESRCH;
  }

  /** The inode number in a namespace link's text ("pid:[4026531836]"), or -1. */
  private static long inode(String link) {
    if (link == null) {
      return -1;
    }
    int open = link.indexOf('[');
    int close = link.indexOf(']');
    try {
      return open > 0 && close > open ? Long.parseLong(link.substring(open + 1, close)) : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
