package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
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
    try {
      own = MountEntry.parseAll(Files.readString(paths.proc("self", "mountinfo")));
    } catch (IOException e) {
      warnings.add("cannot read " + paths.proc("self", "mountinfo") + ": " + e.getMessage());
      return new Result(List.of(), warnings);
    }
    Map<Dev, ShmMount> found = new LinkedHashMap<>();
    if (auto) {
      MountEntry hostShm = visibleAt(own, SHM);
      if (hostShm == null) {
        warnings.add("nothing is mounted at /dev/shm in shmguard's mount namespace");
      } else if (!hostShm.isTmpfs()) {
        warnings.add("/dev/shm is " + hostShm.fsType() + ", not tmpfs; not watched");
      } else {
        found.put(hostShm.dev(), new ShmMount(hostShm.dev(), paths.resolve(SHM), SHM, MountOrigin.HOST,
            hostShm.superOptions(), ownNamespace(), List.of(), null, null));
      }
      discoverNamespaces(own, found, warnings);
    }
    for (String path : configured) {
      MountEntry e = visibleAt(own, path);
      if (e == null) {
        warnings.add("configured mount " + path + " is not a mount point; not watched");
      } else if (!e.isTmpfs()) {
        warnings.add("configured mount " + path + " is " + e.fsType() + ", not tmpfs; not watched");
      } else {
        found.putIfAbsent(e.dev(), new ShmMount(e.dev(), paths.resolve(path), path, MountOrigin.CONFIGURED,
            e.superOptions(), ownNamespace(), List.of(), null, null));
      }
    }
    return new Result(new ArrayList<>(found.values()), warnings);
  }

  private void discoverNamespaces(List<MountEntry> own, Map<Dev, ShmMount> found, List<String> warnings) {
    String ownNs = ownNamespace();
    Map<String, List<Integer>> pidsByNs = new LinkedHashMap<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(paths.proc())) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (!ProcFiles.isPid(name)) {
          continue;
        }
        String ns = ProcFiles.readLinkOrNull(p.resolve("ns").resolve("mnt"));
        if (ns == null || ns.equals(ownNs)) {
          continue;
        }
        List<Integer> pids = pidsByNs.computeIfAbsent(ns, k -> new ArrayList<>());
        if (pids.size() < PIDS_PER_NAMESPACE) {
          pids.add(Integer.parseInt(name));
        }
      }
    } catch (IOException e) {
      warnings.add("cannot list " + paths.proc() + ": " + e.getMessage());
      return;
    }
    Map<Dev, String> hostPathByDev = hostPathsOfTmpfs(own);
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
      int pid = pids.get(0);
      String hostPath = hostPathByDev.get(shm.dev());
      String reach = hostPath != null ? paths.resolve(hostPath) : paths.proc(Integer.toString(pid), "root", "dev", "shm").toString();
      found.put(shm.dev(), new ShmMount(shm.dev(), reach, SHM, MountOrigin.NAMESPACE, shm.superOptions(),
          ns.getKey(), pids, details.container(pid), null));
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

  /** For each tmpfs device mounted whole in our namespace, its shortest mount point. */
  private static Map<Dev, String> hostPathsOfTmpfs(List<MountEntry> own) {
    Map<Dev, String> byDev = new HashMap<>();
    for (MountEntry e : own) {
      if (e.isTmpfs() && e.root().equals("/")) {
        byDev.merge(e.dev(), e.mountPoint(), (a, b) -> a.length() <= b.length() ? a : b);
      }
    }
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

  private String ownNamespace() {
    return ProcFiles.readLinkOrNull(Path.of("/proc/self/ns/mnt"));
  }
}
