package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.ProcCalls;
import org.shmguard.nativ.StatxResult;

/**
 * Finds the shm tmpfs mounts to watch: the /dev/shm of shmguard's own mount namespace, the tmpfs
 * at /dev/shm of every other mount namespace (containers, pods), and configured mount points.
 * Each namespace's mountinfo is read once; each tmpfs appears once, by device.
 *
 * <pre>{@code
 * MountDiscovery.Result found = new MountDiscovery(HostPaths.system()).discover(true, List.of());
 * }</pre>
 */
public final class MountDiscovery {
  static final String SHM = "/dev/shm";
  /** How many pids of a namespace to remember: enough to reach its mount if one exits. */
  private static final int PIDS_PER_NAMESPACE = 4;

  private final HostPaths paths;
  private final ProcessDetails details;

  public MountDiscovery(HostPaths paths) {
    this.paths = paths;
    this.details = new ProcessDetails(paths);
  }

  /** What discovery found, and what it could not use. */
  public record Result(List<ShmMount> mounts, List<String> warnings) {
    public Result {
      mounts = List.copyOf(mounts);
      warnings = List.copyOf(warnings);
    }
  }

  public Result discover(boolean auto, List<String> configured) {
    List<String> warnings = new ArrayList<>();
    List<MountEntry> own;
    Path ownMountinfo = paths.proc(referencePid(), "mountinfo");
    try {
      own = MountEntry.parseAll(Files.readString(ownMountinfo));
    } catch (IOException e) {
      warnings.add("cannot read " + ownMountinfo + ": " + e.getMessage());
      return new Result(List.of(), warnings);
    }
    String ownNs = ownNamespace();
    Map<Dev, List<String>> hostPaths = hostPathsOfTmpfs(own);
    Map<Dev, ShmMount> found = new LinkedHashMap<>();
    if (auto) {
      MountEntry hostShm = visibleAt(own, SHM);
      if (hostShm == null) {
        warnings.add("nothing is mounted at /dev/shm in the host's mount namespace");
      } else if (!hostShm.isTmpfs()) {
        warnings.add("/dev/shm is " + hostShm.fsType() + ", not tmpfs; not watched");
      } else {
        List<String> candidates = new ArrayList<>(List.of(paths.resolve(SHM)));
        if (!paths.isSystemRoot()) {
          candidates.add(paths.proc("1", "root", "dev", "shm").toString());
        }
        String reach = reachable(hostShm.dev(), candidates, warnings);
        if (reach != null) {
          found.put(hostShm.dev(), new ShmMount(hostShm.dev(), reach, SHM, MountOrigin.HOST,
              hostShm.superOptions(), ownNs, List.of(), null, null));
        }
      }
      discoverNamespaces(ownNs, hostPaths, found, warnings);
    }
    for (String path : configured) {
      MountEntry e = visibleAt(own, path);
      if (e == null) {
        warnings.add("configured mount " + path + " is not a mount point; not watched");
      } else if (!e.isTmpfs()) {
        warnings.add("configured mount " + path + " is " + e.fsType() + ", not tmpfs; not watched");
      } else if (!found.containsKey(e.dev())) {
        String reach = reachable(e.dev(), List.of(paths.resolve(path)), warnings);
        if (reach != null) {
          found.put(e.dev(), new ShmMount(e.dev(), reach, path, MountOrigin.CONFIGURED,
              e.superOptions(), ownNs, List.of(), null, null));
        }
      }
    }
    return new Result(new ArrayList<>(found.values()), warnings);
  }

  /**
   * The first of {@code candidates} that leads to device {@code dev} now. A mount point can be
   * covered by a later mount, or a host path can lead elsewhere inside a container: only a path
   * whose stat shows the device is used.
   */
  private static String reachable(Dev dev, List<String> candidates, List<String> warnings) {
    for (String path : candidates) {
      try {
        // A namespace's root can be a FUSE or network directory that stops answering: bounded.
        StatxResult st = PathWalks.shared().run(path, () -> Linux.get().stat(path));
        if (st.isDirectory() && st.devMajor() == dev.major() && st.devMinor() == dev.minor()) {
          return path;
        }
      } catch (PathWalks.Stalled e) {
        // the other candidates of a namespace walk through the same root: not tried this pass
        warnings.add("the tmpfs with device " + dev + " is not watched for now: " + e.getMessage());
        return null;
      } catch (IOException e) {
        // gone, or not reachable from here: try the next one
      }
    }
    warnings.add("the tmpfs with device " + dev + " cannot be reached (tried " + String.join(", ", candidates) + "); not watched");
    return null;
  }

  private void discoverNamespaces(String ownNs, Map<Dev, List<String>> hostPathByDev, Map<Dev, ShmMount> found,
      List<String> warnings) {
    Map<String, List<Integer>> pidsByNs = new LinkedHashMap<>();
    // Raw readlinkat relative to one /proc handle: this runs for every process on every pass.
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      for (int pid : proc.pids()) {
        String ns = proc.readLink(pid, "ns/mnt");
        if (ns == null || ns.equals(ownNs)) {
          continue;
        }
        List<Integer> pids = pidsByNs.computeIfAbsent(ns, k -> new ArrayList<>());
        if (pids.size() < PIDS_PER_NAMESPACE) {
          pids.add(pid);
        }
      }
    } catch (IOException e) {
      warnings.add("cannot list " + paths.proc() + ": " + e.getMessage());
      return;
    }
    for (Map.Entry<String, List<Integer>> ns : pidsByNs.entrySet()) {
      List<Integer> pids = ns.getValue();
      pids.sort(null);
      MountEntry shm = readShmOf(pids, warnings);
      if (shm == null || !shm.isTmpfs()) {
        continue;
      }
      ShmMount known = found.get(shm.dev());
      if (known != null) {
        if (known.origin() == MountOrigin.NAMESPACE) {
          List<Integer> merged = new ArrayList<>(known.pids());
          merged.addAll(pids);
          found.put(shm.dev(), new ShmMount(known.dev(), known.path(), known.mountPoint(), known.origin(),
              known.options(), known.namespace(), merged.subList(0, Math.min(merged.size(), PIDS_PER_NAMESPACE)),
              known.container(), null));
        }
        continue;
      }
      List<String> candidates = new ArrayList<>();
      hostPathByDev.getOrDefault(shm.dev(), List.of()).forEach(p -> candidates.add(paths.resolve(p)));
      pids.forEach(pid -> candidates.add(paths.proc(Integer.toString(pid), "root", "dev", "shm").toString()));
      String reach = reachable(shm.dev(), candidates, warnings);
      if (reach != null) {
        found.put(shm.dev(), new ShmMount(shm.dev(), reach, SHM, MountOrigin.NAMESPACE, shm.superOptions(),
            ns.getKey(), pids, details.container(pids.get(0)), null));
      }
    }
  }

  /** The tmpfs at /dev/shm in the namespace of the first of {@code pids} that can be read. */
  private MountEntry readShmOf(List<Integer> pids, List<String> warnings) {
    for (int pid : pids) {
      try {
        String text = ProcFiles.readOrNull(paths.proc(Integer.toString(pid), "mountinfo"));
        if (text != null) {
          return visibleAt(MountEntry.parseAll(text), SHM);
        }
      } catch (AccessDeniedException e) {
        warnings.add("cannot read the mounts of pid " + pid + ": permission denied");
        return null;
      }
    }
    return null;
  }

  /** For each tmpfs device mounted whole in the host's namespace, its mount points, shortest first. */
  private static Map<Dev, List<String>> hostPathsOfTmpfs(List<MountEntry> own) {
    Map<Dev, List<String>> byDev = new HashMap<>();
    for (MountEntry e : own) {
      if (e.isTmpfs() && e.root().equals("/")) {
        byDev.computeIfAbsent(e.dev(), d -> new ArrayList<>()).add(e.mountPoint());
      }
    }
    byDev.values().forEach(list -> list.sort((a, b) -> Integer.compare(a.length(), b.length())));
    return byDev;
  }

  /** The mount a path shows: the last one mounted there, which covers any earlier one. */
  static MountEntry visibleAt(List<MountEntry> entries, String mountPoint) {
    MountEntry last = null;
    for (MountEntry e : entries) {
      if (e.mountPoint().equals(mountPoint)) {
        last = e;
      }
    }
    return last;
  }

  /**
   * Whose view of the mounts is "the host's": shmguard's own on the host, PID 1's when the host's
   * root (and its /proc) is mounted elsewhere because shmguard runs in a container.
   */
  private String referencePid() {
    return paths.isSystemRoot() ? "self" : "1";
  }

  private String ownNamespace() {
    return ProcFiles.readLinkOrNull(paths.proc(referencePid(), "ns", "mnt"));
  }
}
