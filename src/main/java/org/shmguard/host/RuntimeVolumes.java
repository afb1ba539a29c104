package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Workload;

/**
 * Finds the shm tmpfs of pods and containers where their runtimes mount them on the host, so that
 * they are watched whether or not any process of theirs runs: kubelet's memory-backed emptyDir
 * volumes ({@code <kubeletRoot>/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>}), Docker's
 * per-container shm ({@code <dockerRoot>/containers/<id>/mounts/shm}) and podman's or CRI-O's
 * ({@code <storage root>/<driver>-containers/<id>/userdata/shm}).
 *
 * <p>Only the host's own mounts count: they are taken from the mountinfo of the host's mount
 * namespace, which lists no mount an ordinary user made in a namespace of their own, and only
 * tmpfs mounts of the tmpfs's root, whose mount point has exactly one of the shapes above (a FUSE
 * mount at such a path is not tmpfs; a tmpfs in the host's namespace needs CAP_SYS_ADMIN there).
 * Each is reached through its mount point only once an open handle shows that very mount (its id
 * and device, its root: {@link MountReach}). Who it belongs to comes from its path (the pod's uid,
 * the container's id) and from the runtime's own root-owned files ({@link WorkloadNames}); a pod's
 * /dev/shm that discovery found through its processes instead ({@link #namePods}) is named the same way.
 */
final class RuntimeVolumes {
  private static final String EMPTY_DIR = "kubernetes.io~empty-dir";
  private static final Pattern DRIVER_DIR = Pattern.compile("[a-z0-9]+-containers");

  private final HostPaths paths;
  private final RuntimeRoots roots;
  private final WorkloadNames names;

  RuntimeVolumes(HostPaths paths, RuntimeRoots roots) {
    this.paths = paths;
    this.roots = roots;
    this.names = new WorkloadNames(paths, roots);
  }

  /** A mount point of one runtime's shape, and whose it is by its path. */
  record Shape(Workload workload, String storageRoot, String driverDir, String mountPoint) {}

  /**
   * The workload a host mount point belongs to by its shape, or null when it has none of the
   * shapes under the configured roots. {@code realRoots} maps each configured root to the path
   * mountinfo shows it at (its links resolved).
   */
  static Shape shapeOf(String mountPoint, RuntimeRoots roots, Map<String, String> realRoots) {
    String kubelet = real(roots.kubeletRoot(), realRoots);
    if (kubelet != null) {
      String[] p = partsUnder(mountPoint, kubelet + "/pods/");
      if (p != null && p.length == 4 && Workload.isPodUid(p[0]) && p[1].equals("volumes") && p[2].equals(EMPTY_DIR)
          && Workload.isVolumeName(p[3])) {
        return new Shape(Workload.pod(p[0], p[3]), null, null, mountPoint);
      }
    }
    String docker = real(roots.dockerRoot(), realRoots);
    if (docker != null) {
      String[] p = partsUnder(mountPoint, docker + "/containers/");
      if (p != null && p.length == 3 && Workload.isContainerId(p[0]) && p[1].equals("mounts") && p[2].equals("shm")) {
        return new Shape(Workload.container(Workload.DOCKER, p[0]), null, null, MountDiscovery.SHM);
      }
    }
    for (String configured : roots.containerStorage()) {
      String storage = real(configured, realRoots);
      String[] p = storage == null ? null : partsUnder(mountPoint, storage + "/");
      if (p != null && p.length == 4 && DRIVER_DIR.matcher(p[0]).matches() && Workload.isContainerId(p[1])
          && p[2].equals("userdata") && p[3].equals("shm")) {
        return new Shape(Workload.container(Workload.PODMAN, p[1]), configured, p[0], MountDiscovery.SHM);
      }
    }
    return null;
  }

  private static String real(String root, Map<String, String> realRoots) {
    return root.isEmpty() ? null : realRoots.getOrDefault(root, root);
  }

  private static String[] partsUnder(String path, String prefix) {
    return path.startsWith(prefix) ? path.substring(prefix.length()).split("/", -1) : null;
  }

  /**
   * Adds to {@code found} each runtime's tmpfs of the host's mount list {@code own} that can be
   * reached, attributed; a device already found is left as it is.
   *
   * @param ownMountinfo the mountinfo file {@code own} was read from
   */
  void discover(List<MountEntry> own, String ownNs, String ownMountinfo, Map<Dev, ShmMount> found, List<String> warnings) {
    if (roots.equals(RuntimeRoots.NONE)) {
      return;
    }
    Map<String, String> realRoots = realRoots();
    Map<String, MountEntry> shownAt = new HashMap<>(); // the last mount at a point covers the earlier ones
    Map<MountEntry, Shape> shaped = new LinkedHashMap<>();
    for (MountEntry e : own) {
      shownAt.put(e.mountPoint(), e);
      Shape shape = e.isTmpfs() && e.root().equals("/") ? shapeOf(e.mountPoint(), roots, realRoots) : null;
      if (shape != null) {
        shaped.put(e, shape);
      }
    }
    for (Map.Entry<MountEntry, Shape> s : shaped.entrySet()) {
      MountEntry e = s.getKey();
      Shape shape = s.getValue();
      if (found.containsKey(e.dev()) || shownAt.get(e.mountPoint()) != e) {
        continue; // known already, or covered by a later mount at the same point
      }
      String path = paths.resolve(e.mountPoint());
      if (!MountReach.leadsTo(path, e.mountId(), e.dev())) {
        warnings.add(shape.workload().describe() + "'s tmpfs at " + e.mountPoint() + " cannot be reached; not watched");
        continue;
      }
      Workload w = names.name(e.mountId(), shape.workload(), shape.storageRoot(), shape.driverDir());
      found.put(e.dev(), new ShmMount(e.dev(), path, shape.mountPoint(), MountOrigin.VOLUME, e.superOptions(), ownNs,
          List.of(), w.label(), null, e.mountId(), ownMountinfo, null, 0L, w));
    }
  }

  /**
   * Names the pods whose /dev/shm was found through one of their processes, not at a runtime's
   * host path (containerd's sandbox shm, shown by the pod's pause process): a mount shmguard may
   * act in, labelled {@code pod:<uid>} by its processes' cgroup, gets the pod's namespace and name
   * from kubelet's pod log directory as an emptyDir does (a workload without a volume); one whose
   * pod is not there keeps its label alone. Then forgets the names of mounts no longer found. Run
   * once per discovery, after every mount is found.
   */
  void namePods(Map<Dev, ShmMount> found) {
    if (roots.equals(RuntimeRoots.NONE)) {
      return;
    }
    Set<Long> seen = new HashSet<>();
    for (Map.Entry<Dev, ShmMount> f : found.entrySet()) {
      ShmMount m = f.getValue();
      String label = m.container();
      if (m.workload() != null) {
        seen.add(m.mountId());
      } else if (m.origin() == MountOrigin.NAMESPACE && m.mayAct() && m.mountId() > 0 && label != null
          && label.startsWith("pod:") && Workload.isPodUid(label.substring(4)) && !roots.podLogs().isEmpty()) {
        seen.add(m.mountId());
        Workload w = names.name(m.mountId(), Workload.pod(label.substring(4), null), null, null);
        if (w.hasName()) {
          f.setValue(m.withWorkload(w));
        }
      }
    }
    names.keepOnly(seen);
  }

  /** Each configured root and the real path it leads to now (links resolved), where it exists. */
  private Map<String, String> realRoots() {
    Map<String, String> real = new HashMap<>();
    List<String> all = new ArrayList<>(List.of(roots.kubeletRoot(), roots.dockerRoot()));
    all.addAll(roots.containerStorage());
    for (String root : all) {
      if (root.isEmpty()) {
        continue;
      }
      try {
        Path resolved = PathWalks.shared().run(paths.resolve(root), () -> Path.of(paths.resolve(root)).toRealPath());
        String hostRoot = paths.resolve("/");
        String r = resolved.toString();
        if (paths.isSystemRoot()) {
          real.put(root, r);
        } else if (r.startsWith(hostRoot + "/")) {
          real.put(root, r.substring(hostRoot.length()));
        }
      } catch (IOException | RuntimeException e) {
        // not there (yet): mountinfo is matched against the root as configured
      }
    }
    return real;
  }
}
