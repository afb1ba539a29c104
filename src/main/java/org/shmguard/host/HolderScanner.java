package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.Map;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.nativ.Errno;
import org.shmguard.nativ.ProcCalls;

/**
 * One pass over /proc that finds every process holding a file on the watched devices, by open fd
 * or by mapping, matched by (dev, ino) and never by path.
 *
 * <pre>{@code
 * HolderPass pass = new HolderScanner(HostPaths.system()).scan(Set.of(Dev.of(0, 25)));
 * if (pass.complete()) { ... pass.index().holders(key) ... }
 * }</pre>
 *
 * <p>A process that exits mid-pass is normal and counted as vanished. A process whose maps or fd
 * table cannot be read (permission) makes the pass incomplete: nothing may be reaped on it.
 */
public final class HolderScanner {
  private final HostPaths paths;

  public HolderScanner(HostPaths paths) {
    this.paths = paths;
  }

  public HolderPass scan(Collection<Dev> devs) {
    long[] wanted = encode(devs);
    HolderIndex.Builder index = HolderIndex.builder();
    BitSet live = new BitSet();
    Map<String, List<Integer>> denied = new TreeMap<>();
    int processes = 0;
    int vanished = 0;
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      int[] pids = proc.pids();
      int[][] fds = {new int[64]};
      for (int pid : pids) {
        processes++;
        if (wanted.length == 0) {
          live.set(pid);
          continue;
        }
        try {
          int mapsLength = readMaps(proc, pid, wanted, index);
          if (mapsLength < 0) {
            vanished++;
            continue;
          }
          if (mapsLength == 0) {
            // No address space: a zombie (exited, not yet reaped by its parent) or a kernel thread.
            // It holds nothing and never will; for "has every holder exited" it counts as gone.
            continue;
          }
          live.set(pid);
          if (!readFds(proc, pid, wanted, index, fds)) {
            vanished++;
            live.clear(pid);
          }
        } catch (AccessDeniedException e) {
          live.set(pid); // unknown, so assumed alive
          denied.computeIfAbsent(reason(e), k -> new ArrayList<>()).add(pid);
        }
      }
    } catch (IOException e) {
      return new HolderPass(HolderIndex.empty(), live, List.of("cannot list " + paths.proc() + ": " + e.getMessage()), 0, 0);
    }
    List<String> problems = new ArrayList<>();
    denied.forEach((why, list) -> problems.add(describeDenied(why, list)));
    return new HolderPass(index.build(), live, problems, processes, vanished);
  }

  /** Reads one maps file; its length, or -1 if the process has gone. */
  private int readMaps(ProcCalls proc, int pid, long[] wanted, HolderIndex.Builder index) throws AccessDeniedException {
    int length = proc.readFile(pid, "maps");
    if (length < 0) {
      gone(-length, pid, "maps", "permission denied"); // throws unless the process has gone
      return -1;
    }
    MapsParser.forEachMatch(proc.bytes(), length, wanted, (dev, ino, size, path) -> {
      boolean deleted = path.endsWith(" (deleted)");
      index.add(new FileKey(dev, ino), new HolderRef(pid, Access.MAP, path, deleted, size));
    });
    return length;
  }

  /** Reads one fd table; false if the process has gone. */
  private boolean readFds(ProcCalls proc, int pid, long[] wanted, HolderIndex.Builder index, int[][] fds)
      throws AccessDeniedException {
    int dir = proc.openFdDir(pid);
    if (dir < 0) {
      return !gone(-dir, pid, "fd", "permission denied");
    }
    try {
      int count = proc.fdNumbers(dir, fds);
      if (count < 0) {
        return !gone(-count, pid, "fd", "permission denied");
      }
      int[] list = fds[0];
      for (int i = 0; i < count; i++) {
        int fd = list[i];
        int rc = proc.statFd(dir, fd);
        if (rc < 0) {
          if (-rc == ProcCalls.EACCES || -rc == ProcCalls.EPERM) {
            throw new AccessDeniedException(paths.proc(Integer.toString(pid), "fd", Integer.toString(fd)).toString(), null,
                "stat denied");
          }
          continue; // closed while we looked
        }
        long key = ((long) proc.devMajor() << 32) | (proc.devMinor() & 0xffffffffL);
        if (contains(wanted, key)) {
          long ino = proc.ino();
          long size = proc.size();
          String target = proc.readFdLink(dir, fd);
          String path = target == null ? "?" : target;
          index.add(new FileKey(Dev.of(proc.devMajor(), proc.devMinor()), ino),
              new HolderRef(pid, Access.FD, path, path.endsWith(" (deleted)"), size));
        }
      }
      return true;
    } finally {
      proc.closeFd(dir);
    }
  }

  /**
   * True when {@code errno} says the process has gone (it exited while we looked); any other
   * failure makes the pass incomplete.
   *
   * @throws AccessDeniedException for every errno but ENOENT and ESRCH
   */
  private boolean gone(int errno, int pid, String file, String deniedReason) throws AccessDeniedException {
    if (errno == ProcCalls.ENOENT || errno == ProcCalls.ESRCH) {
      return true;
    }
    String where = paths.proc(Integer.toString(pid), file).toString();
    if (errno == ProcCalls.EACCES || errno == ProcCalls.EPERM) {
      throw new AccessDeniedException(where, null, deniedReason);
    }
    throw new AccessDeniedException(where, null, Errno.describe(errno));
  }

  static long[] encode(Collection<Dev> devs) {
    return devs.stream().distinct().mapToLong(HolderScanner::encode).toArray();
  }

  static long encode(Dev d) {
    return ((long) d.major() << 32) | (d.minor() & 0xffffffffL);
  }

  static boolean contains(long[] wanted, Dev dev) {
    return contains(wanted, encode(dev));
  }

  static boolean contains(long[] wanted, long key) {
    for (long w : wanted) {
      if (w == key) {
        return true;
      }
    }
    return false;
  }

  private static String reason(AccessDeniedException e) {
    String r = e.getReason();
    return r == null || r.isBlank() ? "permission denied" : r;
  }

  private static String describeDenied(String why, List<Integer> pids) {
    StringBuilder sb = new StringBuilder("could not read ").append(pids.size())
        .append(pids.size() == 1 ? " process" : " processes").append(" (").append(why).append("): pid");
    if (pids.size() > 1) {
      sb.append('s');
    }
    for (int i = 0; i < Math.min(5, pids.size()); i++) {
      sb.append(i == 0 ? " " : ", ").append(pids.get(i));
    }
    if (pids.size() > 5) {
      sb.append(", ...");
    }
    return sb.append("; run shmguard as root in the host's PID namespace").toString();
  }
}
