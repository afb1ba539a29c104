package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Dev;
import org.shmguard.model.TorchManagers;
import org.shmguard.nativ.ProcCalls;

/**
 * Finds the live {@code torch_shm_manager} processes and whom each serves: its owner (filesystem
 * uid), its PID namespace, when it started, the devices its mount namespace has at /dev/shm, and
 * how many clients are connected to its socket. It decides nothing.
 *
 * <pre>{@code
 * TorchManagers m = new TorchManagerLookup(HostPaths.system()).find(pass.livePids(), watchedDevices);
 * }</pre>
 *
 * <p>PyTorch starts the manager by exec'ing {@code torch/bin/torch_shm_manager}, so its command
 * (the 15 bytes the kernel keeps) is {@code torch_shm_manag}; it listens on
 * {@code <tmp>/torch-shm-dir-XXXXXX/manager.sock} and keeps one accepted connection per client
 * until that client hangs up (torch/lib/libshm/manager.cpp). An accepted connection carries its
 * listener's path in the unix socket table, so the clients are the manager's connected sockets
 * with its listener's path: read from its fd links ({@code socket:[INODE]}) and the unix table of
 * its own network namespace ({@code /proc/PID/net/unix}).
 *
 * <p>Cost, only on a pass with an unheld file a manager may keep: one read of /proc/PID/stat per
 * live process (the command is in it), and, per manager, its status, fd links and unix table, and
 * its mount namespace's mountinfo once per namespace. A process that exits meanwhile is
 * skipped. Any user may name a process {@code torch_shm_manag}, so the work is bounded: at most
 * {@link #MANAGERS_PER_UID} managers of one uid, {@link #SOCKETS_PER_MANAGER} sockets of one
 * manager and {@link #UNIX_LINES_PER_UID} lines of unix tables for one uid's managers. A manager that cannot be
 * read, or is past those bounds, is named for its uid ({@link TorchManagers#missedByUid()}): only
 * that uid's files wait on it. Only a process whose owner cannot be read at all concerns every
 * uid ({@link TorchManagers#problem()}).
 */
public final class TorchManagerLookup {
  /** The command of a process exec'd from a file named {@code torch_shm_manager}, as the kernel truncates it. */
  static final String COMMAND = "torch_shm_manag";
  /**
   * The most managers of one uid a pass reads. PyTorch may start one per process that shares
   * tensors, and containers commonly all run as root, so a node can have hundreds of one uid's;
   * any user may name a process torch_shm_manag, and those beyond this make only that uid's files wait.
   */
  static final int MANAGERS_PER_UID = 4096;
  /**
   * The most sockets of one manager a pass reads: its listening socket and one per client process
   * of its job; a process with more is not read and makes only its uid's files wait.
   */
  static final int SOCKETS_PER_MANAGER = 65_536;
  /**
   * The most lines of unix socket tables one pass reads for the managers of one uid: a user's
   * network namespace can hold millions of sockets, and each manager is read in its own. Per uid,
   * so that no user's tables spend what another's managers need: a manager read past it is not
   * read, and only its uid's files wait.
   */
  static final long UNIX_LINES_PER_UID = 4_000_000;
  private static final byte[] IN_STAT = ("(" + COMMAND + ") ").getBytes(StandardCharsets.US_ASCII);
  /** __SO_ACCEPTCON in the Flags column of the unix socket table: a listening socket. */
  private static final long ACCEPTING = 0x10000;
  /** SS_CONNECTED in the St column. */
  private static final int CONNECTED = 3;

  private final HostPaths paths;
  private final int managersPerUid;
  private final long unixLinesPerUid;

  public TorchManagerLookup(HostPaths paths) {
    this(paths, MANAGERS_PER_UID, UNIX_LINES_PER_UID);
  }

  /** With other bounds: a fixture shows them met without thousands of processes. */
  TorchManagerLookup(HostPaths paths, int managersPerUid, long unixLinesPerUid) {
    this.paths = paths;
    this.managersPerUid = managersPerUid;
    this.unixLinesPerUid = unixLinesPerUid;
  }

  /**
   * @param live the processes the /proc pass found alive
   * @param watched the devices of the mounts whose files may be registered with a manager: of
   *     each manager's mount namespace, only these devices are kept
   */
  public TorchManagers find(BitSet live, Set<Dev> watched) {
    List<TorchManagers.Manager> found = new ArrayList<>();
    String problem = null;
    // Any user may name a process torch_shm_manag: what one cannot be read, or is beyond what a
    // pass examines for its uid, concerns that uid's files alone.
    Map<Integer, String> missedByUid = new HashMap<>();
    Map<Integer, Integer> examinedByUid = new HashMap<>();
    Map<Integer, long[]> unixLinesLeft = new HashMap<>();
    long bootNanos = ProcessDetails.bootNanos(paths, java.time.Instant.now());
    // Each mount namespace's mountinfo is read once; the unix table once per manager, keeping only its sockets.
    Map<Long, Set<Dev>> shmByMountNs = new HashMap<>();
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      for (int pid = live.nextSetBit(0); pid >= 0; pid = live.nextSetBit(pid + 1)) {
        int length = proc.readWholeRecordFile(pid, "stat");
        if (length < 0) {
          if (length != -ProcCalls.ENOENT && length != -ProcCalls.ESRCH) {
            problem = "cannot read /proc/" + pid + "/stat";
          }
          continue;
        }
        byte[] stat = proc.bytes();
        if (!isManager(stat, length)) {
          continue;
        }
        long ticks = ProcessDetails.startTicks(stat, length);
        String status;
        try {
          status = ProcFiles.readOrNull(paths.proc(Integer.toString(pid), "status"));
        } catch (AccessDeniedException e) {
          problem = "cannot read whose torch_shm_manager pid " + pid + " is: " + e.getMessage();
          continue;
        }
        if (status == null) {
          continue; // exited while we looked
        }
        int uid = fsUid(status);
        if (uid < 0) {
          problem = "cannot read whose torch_shm_manager pid " + pid + " is: /proc/" + pid + "/status has no Uid line";
          continue;
        }
        if (examinedByUid.merge(uid, 1, Integer::sum) > managersPerUid) {
          missedByUid.putIfAbsent(uid, "more than " + managersPerUid + " torch_shm_managers of uid " + uid
              + ", more than one pass examines");
          continue;
        }
        try {
          TorchManagers.Manager m = manager(proc, pid, uid, ticks, bootNanos, watched, shmByMountNs,
              unixLinesLeft.computeIfAbsent(uid, u -> new long[] {unixLinesPerUid}));
          if (m != null) {
            found.add(m);
          }
        } catch (AccessDeniedException e) {
          missedByUid.putIfAbsent(uid, "cannot read torch_shm_manager pid " + pid + " (uid " + uid + "): " + e.getMessage());
        }
      }
    } catch (IOException e) {
      return new TorchManagers(true, List.of(), "cannot list " + paths.proc() + ": " + e.getMessage());
    }
    return new TorchManagers(true, found, problem, missedByUid);
  }

  /** Whether a stat text's command is exactly torch_shm_manager's: "(torch_shm_manag) " right after the pid. */
  static boolean isManager(byte[] stat, int length) {
    int open = 0;
    while (open < length && stat[open] != '(') {
      open++;
    }
    if (open + IN_STAT.length > length) {
      return false;
    }
    for (int i = 0; i < IN_STAT.length; i++) {
      if (stat[open + i] != IN_STAT[i]) {
        return false;
      }
    }
    return true;
  }

  /** The manager {@code pid}, running as {@code uid}, or null when it exited while read. */
  private TorchManagers.Manager manager(ProcCalls proc, int pid, int uid, long ticks, long bootNanos, Set<Dev> watched,
      Map<Long, Set<Dev>> shmByMountNs, long[] unixLinesLeft) throws AccessDeniedException {
    Set<Long> sockets = socketInodes(pid);
    if (sockets == null) {
      return null;
    }
    Map<Long, UnixSocket> table = unixTable(pid, sockets, unixLinesLeft);
    if (table == null) {
      return null;
    }
    String socket = null;
    int clients = 0;
    for (long inode : sockets) {
      UnixSocket u = table.get(inode);
      if (u != null && u.listening() && socket == null) {
        socket = u.path();
      }
    }
    for (long inode : sockets) {
      UnixSocket u = table.get(inode);
      if (socket != null && u != null && !u.listening() && u.state() == CONNECTED && socket.equals(u.path())) {
        clients++;
      }
    }
    long mountNs = proc.namespaceInode(pid, "mnt");
    Set<Dev> atShm = mountNs >= 0 ? shmByMountNs.get(mountNs) : null;
    if (atShm == null) {
      atShm = atShm(pid, watched);
      if (atShm != null && mountNs >= 0) {
        shmByMountNs.put(mountNs, atShm);
      }
    }
    long pidNs = proc.namespaceInode(pid, "pid");
    long start = ProcessDetails.startNanos(bootNanos, ticks);
    return new TorchManagers.Manager(pid, uid, Math.max(pidNs, -1), Math.max(ticks, -1), start, socket, clients, atShm);
  }

  /** The filesystem uid (the fourth field of {@code Uid:}), the owner the files its clients create get; or -1. */
  static int fsUid(String status) {
    int[] uids = ProcessDetails.uids(status);
    return uids == null ? -1 : uids[3];
  }


  /** The inodes of the sockets among the fds of {@code pid}, or null when it has gone. */
  private Set<Long> socketInodes(int pid) throws AccessDeniedException {
    Path fds = paths.proc(Integer.toString(pid), "fd");
    Set<Long> inodes = new HashSet<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(fds)) {
      for (Path fd : dir) {
        String link = ProcFiles.readLinkOrNull(fd);
        if (link != null && link.startsWith("socket:[") && link.endsWith("]")) {
          if (inodes.size() == SOCKETS_PER_MANAGER) {
            throw new AccessDeniedException(fds.toString(), null, "more than " + SOCKETS_PER_MANAGER
                + " sockets, more than a pass reads of one torch_shm_manager");
          }
          try {
            inodes.add(Long.parseLong(link.substring(8, link.length() - 1)));
          } catch (NumberFormatException e) {
            // not a socket link after all
          }
        }
      }
    } catch (AccessDeniedException e) {
      throw e;
    } catch (IOException e) {
      if (ProcFiles.isGone(e)) {
        return null;
      }
      throw new AccessDeniedException(fds.toString(), null, e.getMessage());
    }
    return inodes;
  }

  /** One line of a unix socket table that has a path. */
  private record UnixSocket(boolean listening, int state, String path) {}

  /**
   * The lines of {@code sockets} bound to a path in the unix table of the network namespace of
   * {@code pid}, by inode: "Num RefCount Protocol Flags Type St Inode Path". Null when it has gone.
   */
  private Map<Long, UnixSocket> unixTable(int pid, Set<Long> sockets, long[] linesLeft) throws AccessDeniedException {
    Map<Long, UnixSocket> table = new HashMap<>();
    Path file = paths.proc(Integer.toString(pid), "net", "unix");
    if (linesLeft[0] <= 0) {
      throw new AccessDeniedException(file.toString(), null, "this pass read the " + unixLinesPerUid
          + " lines of unix socket tables it reads for one uid already");
    }
    boolean read = ProcFiles.forEachLine(file, line -> {
      if (--linesLeft[0] < 0) {
        return; // past the budget: the rest is not parsed, and the table is not trusted below
      }
      String[] f = line.trim().split("\\s+", 8);
      if (f.length < 8) {
        return; // a socket bound to no path
      }
      try {
        long inode = Long.parseLong(f[6]);
        if (!sockets.contains(inode)) {
          return;
        }
        long flags = Long.parseLong(f[3], 16);
        table.put(inode, new UnixSocket((flags & ACCEPTING) != 0, Integer.parseInt(f[5], 16), f[7]));
      } catch (NumberFormatException e) {
        // the header line
      }
    });
    if (linesLeft[0] < 0) {
      throw new AccessDeniedException(file.toString(), null, "longer than what is left of the "
          + unixLinesPerUid + " lines of unix socket tables a pass reads for one uid");
    }
    return read ? table : null;
  }

  /** The watched devices the mount namespace of {@code pid} has at /dev/shm, or null if unreadable. */
  private Set<Dev> atShm(int pid, Set<Dev> watched) {
    Set<Dev> atShm = new HashSet<>();
    try {
      boolean read = ProcFiles.forEachLine(paths.proc(Integer.toString(pid), "mountinfo"), line -> {
        MountEntry e = line.contains(" /dev/shm ") ? MountEntry.parse(line) : null;
        if (e != null && e.mountPoint().equals("/dev/shm") && watched.contains(e.dev())) {
          atShm.add(e.dev());
        }
      });
      return read ? atShm : null;
    } catch (AccessDeniedException e) {
      return null;
    }
  }
}
