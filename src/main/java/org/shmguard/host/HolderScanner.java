package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.nativ.ProcCalls;

/**
 * One pass over /proc that finds every process holding a file on the watched devices, by open fd
 * (in any of its threads' fd tables) or by mapping, matched by (dev, ino) and never by path.
 *
 * <pre>{@code
 * HolderPass pass = new HolderScanner(HostPaths.system()).scan(Set.of(Dev.of(0, 25)));
 * if (pass.complete()) { ... pass.index().holders(key) ... }
 * }</pre>
 *
 * <p>A process that exits mid-pass is normal and counted as vanished. A process whose maps or fd
 * table cannot be read (permission) makes the pass incomplete: nothing may be reaped on it. An fd
 * on another filesystem never does: {@link ProcessReader} reads no file's attributes before its
 * mount id says it is on a watched tmpfs.
 */
public final class HolderScanner {
  /** How many processes are read between two calls of a pass's {@code between}. */
  static final int BETWEEN_EVERY = 32;
  private static final Runnable NOTHING_BETWEEN = () -> { };
  private final HostPaths paths;
  /** The memfds' internal mount: {mnt_id, major, minor}; it lasts as long as the kernel runs. */
  private int[] memfdMount;

  public HolderScanner(HostPaths paths) {
    this.paths = paths;
  }

  /** Every fd on a mount no mountinfo lists is kept, whatever its inode number (tests, benchmarks). */
  public HolderPass scan(Collection<Dev> devs) {
    return scan(devs, null);
  }

  /**
   * The pass for the watched files with inode numbers {@code inodes} (null: any): an fd on a
   * mount no mountinfo lists is kept only if its inode number is one of them, so what the index
   * keeps of such fds is bounded by the files listed, not by how many fds users open.
   */
  public HolderPass scan(Collection<Dev> devs, long[] inodes) {
    return scan(devs, inodes, false, NOTHING_BETWEEN);
  }

  /** The same, calling {@code between} every {@link #BETWEEN_EVERY} processes (a full pass that yields to exits). */
  public HolderPass scan(Collection<Dev> devs, long[] inodes, Runnable between) {
    return scan(devs, inodes, false, between);
  }

  /**
   * The same pass over fd tables only, every thread's as in {@link #scan}, and no process's maps:
   * the confirming pass of a reap whose last check, the write lease, the kernel refuses while any
   * mapping of the file exists. An {@code O_PATH} fd, which the lease does not see, is found here.
   */
  public HolderPass scanFdTables(Collection<Dev> devs, long[] inodes) {
    return scan(devs, inodes, true, NOTHING_BETWEEN);
  }

  private HolderPass scan(Collection<Dev> devs, long[] inodes, boolean fdTablesOnly, Runnable between) {
    long[] sortedInodes = inodes == null ? null : java.util.Arrays.stream(inodes).sorted().distinct().toArray();
    long[] wanted = encode(devs);
    HolderIndex.Builder index = HolderIndex.builder();
    BitSet live = new BitSet();
    Map<String, List<Integer>> denied = new TreeMap<>();
    int processes = 0;
    int vanished = 0;
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      int[] pids = proc.pids();
      ProcessReader reader = new ProcessReader(proc, paths, wanted, sortedInodes, index, mountIds(proc, wanted), pids,
          fdTablesOnly);
      for (int pid : pids) {
        if (++processes % BETWEEN_EVERY == 0) {
          between.run();
        }
        if (wanted.length == 0) {
          live.set(pid);
          continue;
        }
        try {
          switch (reader.read(pid)) {
            case LIVE -> live.set(pid);
            case VANISHED -> vanished++;
            case HOLDS_NOTHING -> { } // a zombie or kernel thread: for "has every holder exited" it is gone
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

  private synchronized MountIds mountIds(ProcCalls proc, long[] wanted) {
    if (memfdMount == null) {
      memfdMount = proc.memfdMount();
    }
    MountIds ids = new MountIds(wanted);
    if (memfdMount != null) {
      ids.internal(memfdMount[0], Dev.of(memfdMount[1], memfdMount[2]));
    }
    return ids;
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
