package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.Map;
import jnr.posix.FileStat;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.nativ.Posix;

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
  private static final int EACCES = 13;
  private static final int EPERM = 1;

  private final HostPaths paths;
  private final Posix posix;

  public HolderScanner(HostPaths paths) {
    this(paths, Posix.get());
  }

  HolderScanner(HostPaths paths, Posix posix) {
    this.paths = paths;
    this.posix = posix;
  }

  public HolderPass scan(Collection<Dev> devs) {
    long[] wanted = encode(devs);
    HolderIndex.Builder index = HolderIndex.builder();
    BitSet live = new BitSet();
    Map<String, List<Integer>> denied = new TreeMap<>();
    int processes = 0;
    int vanished = 0;
    FileStat statBuffer = posix.newStatBuffer();
    ReadBuffer mapsBuffer = new ReadBuffer();
    List<Integer> pids;
    try {
      pids = listPids();
    } catch (IOException e) {
      return new HolderPass(HolderIndex.empty(), live, List.of("cannot list " + paths.proc() + ": " + e.getMessage()), 0, 0);
    }
    for (int pid : pids) {
      processes++;
      if (wanted.length == 0) {
        live.set(pid);
        continue;
      }
      String pidName = Integer.toString(pid);
      try {
        if (!readMaps(pid, paths.proc(pidName, "maps"), wanted, index, mapsBuffer)) {
          vanished++;
          continue;
        }
        if (mapsBuffer.length() == 0) {
          // No address space: a zombie (exited, not yet reaped by its parent) or a kernel thread.
          // It holds nothing and never will; for "has every holder exited" it counts as gone.
          continue;
        }
        live.set(pid);
        if (!readFds(pid, paths.proc(pidName, "fd"), wanted, index, statBuffer)) {
          vanished++;
          live.clear(pid);
        }
      } catch (AccessDeniedException e) {
        live.set(pid); // unknown, so assumed alive
        denied.computeIfAbsent(reason(e), k -> new ArrayList<>()).add(pid);
      }
    }
    List<String> problems = new ArrayList<>();
    denied.forEach((why, list) -> problems.add(describeDenied(why, list)));
    return new HolderPass(index.build(), live, problems, processes, vanished);
  }

  private List<Integer> listPids() throws IOException {
    List<Integer> pids = new ArrayList<>(512);
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(paths.proc())) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (ProcFiles.isPid(name)) {
          pids.add(Integer.parseInt(name));
        }
      }
    }
    pids.sort(null);
    return pids;
  }

  /** Reads one maps file; false if the process has gone. */
  private static boolean readMaps(int pid, Path maps, long[] wanted, HolderIndex.Builder index, ReadBuffer buf)
      throws AccessDeniedException {
    if (!buf.fill(maps)) {
      return false;
    }
    MapsParser.forEachMatch(buf.bytes(), buf.length(), wanted, (dev, ino, length, path) -> {
      boolean deleted = path.endsWith(" (deleted)");
      index.add(new FileKey(dev, ino), new HolderRef(pid, Access.MAP, path, deleted, length));
    });
    return true;
  }

  /** Reads one fd table; false if the process has gone. */
  private boolean readFds(int pid, Path fdDir, long[] wanted, HolderIndex.Builder index, FileStat buf)
      throws AccessDeniedException {
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(fdDir)) {
      for (Path fd : dir) {
        Posix.FileId id = posix.statFollow(fd.toString(), buf);
        if (id == null) {
          int errno = posix.errno();
          if (errno == EACCES || errno == EPERM) {
            throw new AccessDeniedException(fd.toString(), null, "stat denied");
          }
          continue; // closed while we looked
        }
        Dev dev = Dev.fromEncoded(id.encodedDev());
        if (contains(wanted, dev)) {
          String target = ProcFiles.readLinkOrNull(fd);
          String path = target == null ? "?" : target;
          index.add(new FileKey(dev, id.ino()), new HolderRef(pid, Access.FD, path, path.endsWith(" (deleted)"), buf.st_size()));
        }
      }
      return true;
    } catch (NoSuchFileException e) {
      return false;
    } catch (AccessDeniedException e) {
      throw e;
    } catch (DirectoryIteratorException e) {
      if (ProcFiles.isGone(e.getCause())) {
        return false;
      }
      throw new AccessDeniedException(fdDir.toString(), null, e.getCause().getMessage());
    } catch (IOException e) {
      if (ProcFiles.isGone(e)) {
        return false;
      }
      throw new AccessDeniedException(fdDir.toString(), null, e.getMessage());
    }
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
