package org.shmguard.host;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.model.Dev;
import org.shmguard.nativ.ProcCalls;

/**
 * The files of a tmpfs that are mounted somewhere (`mount --bind /dev/shm/F /x`, a container's
 * `-v /dev/shm/F:/x`), in any mount namespace that has a process. Such a mount holds the file
 * without opening it: no fd in /proc shows it and the kernel grants a write lease, yet whoever
 * opens the mount point later expects the file. Each namespace's mountinfo is read once, from the
 * first of its processes that can be read.
 *
 * <pre>{@code
 * Map<String, String> held = new BindMounts(HostPaths.system()).roots(dev); // "/nccl-x" -> "/x (pid 42's mounts)"
 * }</pre>
 */
public final class BindMounts {
  private static final int PIDS_PER_NAMESPACE = 4;
  private final HostPaths paths;

  public BindMounts(HostPaths paths) {
    this.paths = paths;
  }

  /**
   * For each mount of {@code dev} whose root is not the tmpfs's root, that root (a path inside the
   * tmpfs, such as "/nccl-x") and where it is mounted.
   *
   * @throws IOException when some namespace's mounts cannot be read: a bind mount cannot be ruled out
   */
  public Map<String, String> roots(Dev dev) throws IOException {
    Map<String, List<Integer>> pidsByNs = new LinkedHashMap<>();
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      for (int pid : proc.pids()) {
        String ns = proc.readLink(pid, "ns/mnt");
        if (ns != null) {
          List<Integer> pids = pidsByNs.computeIfAbsent(ns, k -> new ArrayList<>());
          if (pids.size() < PIDS_PER_NAMESPACE) {
            pids.add(pid);
          }
        }
      }
    }
    Map<String, String> roots = new LinkedHashMap<>();
    for (List<Integer> pids : pidsByNs.values()) {
      readNamespace(pids, dev, roots);
    }
    return roots;
  }

  /** Adds the mounts of {@code dev} in the namespace of {@code pids}; a namespace whose processes all exited has none. */
  private void readNamespace(List<Integer> pids, Dev dev, Map<String, String> roots) throws AccessDeniedException {
    for (int pid : pids) {
      // Line by line: a user namespace's mountinfo can be larger than the daemon's heap.
      String field = " " + dev.major() + ":" + dev.minor() + " ";
      boolean read = ProcFiles.forEachLine(paths.proc(Integer.toString(pid), "mountinfo"), line -> {
        if (line.contains(field)) {
          MountEntry e = MountEntry.parse(line);
          if (e != null && e.dev().equals(dev) && !e.root().equals("/")) {
            roots.putIfAbsent(e.root(), e.mountPoint() + " (the mounts of pid " + pid + ")");
          }
        }
      });
      if (read) {
        return;
      }
      // it exited: another process of the namespace may still show it
    }
  }
}
