package org.shmguard.host;

import java.nio.file.AccessDeniedException;
import java.util.Arrays;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.Use;
import org.shmguard.nativ.Errno;
import org.shmguard.nativ.ProcCalls;

/**
 * What one process holds on the watched devices, as the kernel shows it through /proc: its
 * address space (read through a live thread when the group leader has exited) and every distinct
 * fd table among its threads (a thread made by clone() without CLONE_FILES has its own). One
 * instance per pass; not thread-safe.
 *
 * <p>No fd is stat'ed before its mount is known to be a watched tmpfs: the fd link's text (d_path,
 * answered from the kernel's dentries) sorts out sockets, pipes and anonymous inodes, and
 * /proc/PID/fdinfo/N gives the mount id and inode number without calling the file's filesystem.
 * A FUSE or network filesystem can neither refuse nor stall this pass.
 */
final class ProcessReader {
  /** What reading a process found. */
  enum Outcome {
    /** It has an address space: alive, its holdings recorded. */
    LIVE,
    /** No task of it has an address space: a zombie, a kernel thread. It holds nothing. */
    HOLDS_NOTHING,
    /** It exited while we looked. */
    VANISHED
  }

  private static final int ENAMETOOLONG = 36;

  private final ProcCalls proc;
  private final HostPaths paths;
  private final long[] wanted;
  /**
   * The inode numbers, sorted, of the watched files this pass is for; an fd on a mount no
   * mountinfo lists is kept only if its inode number is one of them. Null: every such fd is kept.
   */
  private final long[] inodes;
  private final HolderIndex.Builder index;
  private final MountIds mounts;
  /** The pids this pass reads, ascending: their mount namespaces are every one that has a process. */
  private final int[] pids;
  /**
   * kcmp takes thread ids of shmguard's own PID namespace: they name the tasks listed only when
   * the /proc read is that namespace's (its "self" is our pid). Otherwise every table is read.
   */
  private final boolean kcmpUsable;
  private boolean kcmpMissing;
  /** Whether this pass has read the mountinfo of every mount namespace (see {@link #learnEveryNamespace}). */
  private boolean everyNamespaceRead;
  /**
   * Whether only fd tables are read (the exit path's confirming pass): mappings are left to the
   * write lease, which every mapping of the file refuses.
   */
  private final boolean fdTablesOnly;
  private final int[][] fds = {new int[64]};
  private final int[] tables = new int[16];

  ProcessReader(ProcCalls proc, HostPaths paths, long[] wanted, long[] inodes, HolderIndex.Builder index,
      MountIds mounts, int[] pids) {
    this(proc, paths, wanted, inodes, index, mounts, pids, false);
  }

  ProcessReader(ProcCalls proc, HostPaths paths, long[] wanted, long[] inodes, HolderIndex.Builder index,
      MountIds mounts, int[] pids, boolean fdTablesOnly) {
    this.fdTablesOnly = fdTablesOnly;
    this.proc = proc;
    this.pids = pids;
    this.inodes = inodes;
    this.mounts = mounts;
    this.paths = paths;
    this.wanted = wanted;
    this.index = index;
    this.kcmpUsable = Long.toString(ProcessHandle.current().pid()).equals(proc.readLink("self"));
  }

  /**
   * Records what {@code pid} holds.
   *
   * @throws AccessDeniedException when something that could hold a watched file cannot be read
   */
  Outcome read(int pid) throws AccessDeniedException {
    int threads = threads(pid);
    String leader = Integer.toString(pid);
    if (fdTablesOnly) {
      return readFdTablesOnly(pid, leader, threads);
    }
    int mapsLength = readMaps(leader, pid);
    if (mapsLength < 0) {
      return Outcome.VANISHED;
    }
    int[] tids = null;
    boolean leaderAlive = mapsLength > 0;
    if (!leaderAlive) {
      if (threads == 1) {
        return Outcome.HOLDS_NOTHING; // a zombie or a kernel thread
      }
      // The group leader has exited (pthread_exit in main) while other threads live on: its maps
      // and fd table are empty, the address space is still there, seen through a live thread.
      tids = tids(pid);
      if (tids == null || !mapsThroughLiveTask(pid, tids)) {
        return Outcome.HOLDS_NOTHING;
      }
    }
    int tableCount = 0;
    if (leaderAlive) {
      if (!readFdTable(pid, leader)) {
        return Outcome.VANISHED;
      }
      tables[tableCount++] = pid;
    }
    if (threads > 1) {
      if (tids == null) {
        tids = tids(pid);
      }
      for (int tid : tids == null ? new int[0] : tids) {
        if (tid == pid || sharesTableWithOneRead(tid, tableCount)) {
          continue;
        }
        if (readFdTable(pid, pid + "/task/" + tid) && tableCount < tables.length) {
          tables[tableCount++] = tid;
        }
      }
    }
    return Outcome.LIVE;
  }

  /**
   * Every distinct fd table of {@code pid}, and no address space. A zombie's table, and that of a
   * group leader that has exited while its threads live, is empty; the threads' are read as in a
   * full pass. The process counts as live (this pass answers only "which fd holds which file").
   */
  private Outcome readFdTablesOnly(int pid, String leader, int threads) throws AccessDeniedException {
    if (!readFdTable(pid, leader)) {
      return Outcome.VANISHED;
    }
    tables[0] = pid;
    int tableCount = 1;
    if (threads > 1) {
      int[] tids = tids(pid);
      for (int tid : tids == null ? new int[0] : tids) {
        if (tid == pid || sharesTableWithOneRead(tid, tableCount)) {
          continue;
        }
        if (readFdTable(pid, pid + "/task/" + tid) && tableCount < tables.length) {
          tables[tableCount++] = tid;
        }
      }
    }
    return Outcome.LIVE;
  }

  /**
   * How many threads {@code pid} has: one statx on procfs, whose task directory has a link per
   * thread. When the kernel cannot say, as many as there may be: every task is then listed. A
   * fixture tree without a task directory has one.
   */
  private int threads(int pid) {
    int threads = proc.threadCount(pid);
    if (threads == -ProcCalls.ENOENT) {
      return 1; // gone (the maps read will tell) or a fixture
    }
    return threads < 0 ? Integer.MAX_VALUE : Math.max(1, threads);
  }

  /** The thread ids of {@code pid}, or null if it has gone. */
  private int[] tids(int pid) throws AccessDeniedException {
    int[] tids = proc.tids(pid);
    if (tids == null) {
      gone(proc.lastErrno(), pid + "/task");
    }
    return tids;
  }

  /** Reads the address space through the first task whose maps is not empty; false if none is. */
  private boolean mapsThroughLiveTask(int pid, int[] tids) throws AccessDeniedException {
    for (int tid : tids) {
      if (tid != pid && readMaps(pid + "/task/" + tid, pid) > 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether thread {@code tid} shares an fd table already read for this process (kcmp KCMP_FILES).
   * When kcmp cannot answer, false: the table is read, which is only slower.
   */
  private boolean sharesTableWithOneRead(int tid, int tableCount) {
    if (!kcmpUsable || kcmpMissing) {
      return false;
    }
    for (int i = 0; i < tableCount; i++) {
      int rc = ProcCalls.sameFdTable(tables[i], tid);
      if (rc == 0) {
        return true;
      }
      if (rc == -ProcCalls.ENOSYS) {
        kcmpMissing = true; // a kernel built without CONFIG_KCMP
        return false;
      }
      // > 0: another table; ESRCH: one of them has gone; EPERM, EACCES: kcmp refused. Read it.
    }
    return false;
  }

  /** Reads the maps of {@code task} ("PID" or "PID/task/TID"); its length, or -1 if it has gone. */
  private int readMaps(String task, int pid) throws AccessDeniedException {
    // By pieces: any user can make a process's maps hundreds of MiB long (65,000 mappings of a long path).
    int length = proc.readLines(task + "/maps", (b, n) -> MapsParser.forEachMatch(b, n, wanted, (dev, ino, size, path, writes) -> {
      boolean deleted = path.endsWith(" (deleted)");
      index.add(new FileKey(dev, ino), new HolderRef(pid, Access.MAP, path, deleted, size, Use.ofMapPerms(writes, true)));
    }));
    if (length < 0) {
      gone(-length, task + "/maps"); // throws unless it has gone
      return -1;
    }
    return length;
  }

  /** Reads the fd table of {@code task} ("PID" or "PID/task/TID"); false if it has gone. */
  private boolean readFdTable(int pid, String task) throws AccessDeniedException {
    int dir = proc.openDir(task + "/fd");
    if (dir < 0) {
      return !gone(-dir, task + "/fd");
    }
    int infoDir = -1;
    try {
      int count = proc.fdNumbers(dir, fds);
      if (count < 0) {
        return !gone(-count, task + "/fd");
      }
      boolean mountsRead = false;
      int[] list = fds[0];
      for (int i = 0; i < count; i++) {
        int fd = list[i];
        int link = proc.fdLink(dir, fd);
        if (link >= 0 && !proc.linkStartsWithSlash()) {
          continue; // socket:[..], pipe:[..], anon_inode:..: never a file of a mount
        }
        if (link < 0 && -link != ENAMETOOLONG) {
          if (gone(-link, task + "/fd/" + fd)) {
            continue; // closed while we looked
          }
        }
        if (infoDir < 0) {
          infoDir = proc.openDir(task + "/fdinfo");
          if (infoDir < 0) {
            return !gone(-infoDir, task + "/fdinfo");
          }
        }
        int n = proc.readEntry(infoDir, fd);
        if (n < 0) {
          gone(-n, task + "/fdinfo/" + fd);
          continue; // closed while we looked
        }
        long mntId = FdInfo.field(proc.bytes(), n, FdInfo.MNT_ID);
        long ino = FdInfo.field(proc.bytes(), n, FdInfo.INO);
        // Read now, before learning mounts reuses the buffer: whose exit counts rests on it.
        Use use = Use.ofFdFlags(FdInfo.flags(proc.bytes(), n));
        if (mntId < 0) {
          throw new AccessDeniedException(paths.proc(task, "fdinfo", Integer.toString(fd)).toString(), null,
              "fdinfo has no mnt_id (a kernel older than 3.15)");
        }
        Dev dev = mounts.device((int) mntId);
        // Read now, only for an fd not yet placed: learning mounts reuses the buffer.
        boolean pathOnly = dev == null && (use == Use.LOOKUP || use == Use.UNKNOWN);
        String path = null; // made only for an fd that holds, or before the link buffer is reused
        if (dev == null && !mountsRead) {
          mountsRead = true;
          path = linkText(link);
          learnMountsOf(task);
          learnMountsOf(paths.isSystemRoot() ? "self" : "1"); // an fd kept from before an unshare
          dev = mounts.device((int) mntId);
        }
        if (dev == null && !everyNamespaceRead) {
          // A mount of another namespace: a host process's fd opened through /proc/PID/root, or
          // passed over a Unix socket, or kept across a setns. Which namespaces were read so far
          // depends on the pid order, so every namespace is read now, once per pass.
          everyNamespaceRead = true;
          if (path == null) {
            path = linkText(link);
          }
          learnEveryNamespace();
          dev = mounts.device((int) mntId);
        }
        if (dev == null) {
          if (inodes != null && ino >= 0 && Arrays.binarySearch(inodes, ino) < 0) {
            // No watched file has its inode number: any user can open a million of these, and
            // keeping each (with its link text) would fill the heap.
            continue;
          }
          unresolved(pid, task, fd, ino, pathOnly, path != null ? path : linkText(link));
        } else if (HolderScanner.contains(wanted, dev)) {
          watched(pid, dir, fd, dev, ino, path != null ? path : linkText(link), use);
        }
      }
      return true;
    } finally {
      proc.closeFd(dir);
      if (infoDir >= 0) {
        proc.closeFd(infoDir);
      }
    }
  }

  /** The text of the fd link just read, or "?" where it could not be read. */
  private String linkText(int link) {
    return link >= 0 ? proc.linkText() : "?";
  }

  /**
   * An fd on a watched tmpfs. Its size (for hidden-usage accounting of unlinked files, which no
   * listing shows) comes from a statx through the fd link, made only now that the mount id says
   * the file is on a watched tmpfs: tmpfs answers from memory and never waits on a server, and
   * AT_STATX_DONT_SYNC keeps even a stale mount id from making a filesystem ask one. The statx's
   * own device and inode are the final word where it answers.
   */
  private void watched(int pid, int dir, int fd, Dev dev, long ino, String path, Use use) {
    long size = 0;
    if (proc.statFd(dir, fd) == 0) {
      dev = Dev.of(proc.devMajor(), proc.devMinor());
      ino = proc.ino();
      size = proc.size();
      if (!HolderScanner.contains(wanted, dev)) {
        return; // the mount id was taken by another mount since it was read
      }
    } else if (ino < 0) {
      return; // closed while we looked, and no inode number to go by
    }
    index.add(new FileKey(dev, ino), new HolderRef(pid, Access.FD, path, path.endsWith(" (deleted)"), size, use));
  }

  /**
   * An fd on a mount no mountinfo read lists (a detached mount, a mount made after it was read, a
   * hugetlb memfd's): it may be any watched file with its inode number. An O_PATH one, which no
   * write lease sees, holds every such file; any other is an open file description, which makes
   * the reap's lease fail on the very file it is, so it is kept only as a hint for that reason
   * (else a user's fds on a detached tmpfs of their own would keep every segment with their inode
   * numbers). It never makes the pass incomplete.
   */
  private void unresolved(int pid, String task, int fd, long ino, boolean pathOnly, String path)
      throws AccessDeniedException {
    if (ino < 0) {
      throw new AccessDeniedException(paths.proc(task, "fdinfo", Integer.toString(fd)).toString(), null,
          "fdinfo has no ino (a kernel too old to show it)");
    }
    HolderRef ref = new HolderRef(pid, Access.FD_UNRESOLVED, path, path.endsWith(" (deleted)"), 0);
    if (pathOnly) {
      index.addUnresolved(ino, ref);
    } else {
      index.addHint(ino, ref);
    }
  }

  /**
   * Reads the mountinfo of every mount namespace that has a process now, each once per pass: for
   * an fd whose mount neither its own namespace nor shmguard's lists. Only a mount that no
   * namespace lists (detached with umount -l, made after this read) stays unplaced.
   */
  private void learnEveryNamespace() {
    for (int pid : pids) {
      learnMountsOf(Integer.toString(pid));
    }
  }

  /** Reads the mountinfo of {@code task}'s mount namespace, unless this pass has read it already. */
  private void learnMountsOf(String task) {
    String ns = proc.readLink(task + "/ns/mnt");
    String key = ns != null ? ns : task;
    if (mounts.hasRead(key)) {
      return;
    }
    // By pieces: a user namespace's mountinfo can have thousands of lines of 8 KiB.
    int length = proc.readLines(task + "/mountinfo", (b, n) -> mounts.learn(key, b, n));
    if (length <= 0) {
      mounts.tried(key); // unreadable: its fds' mounts stay unknown, so they hold by inode number
    }
  }

  /**
   * True when {@code errno} says the task has gone (it exited while we looked); any other failure
   * makes the pass incomplete.
   *
   * @throws AccessDeniedException for every errno but ENOENT and ESRCH
   */
  private boolean gone(int errno, String what) throws AccessDeniedException {
    if (errno == ProcCalls.ENOENT || errno == ProcCalls.ESRCH) {
      return true;
    }
    String where = paths.proc(what).toString();
    if (errno == ProcCalls.EACCES || errno == ProcCalls.EPERM) {
      throw new AccessDeniedException(where, null, "permission denied");
    }
    throw new AccessDeniedException(where, null, Errno.describe(errno));
  }
}
