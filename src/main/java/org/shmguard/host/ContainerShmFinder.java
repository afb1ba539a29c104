package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import org.shmguard.model.ContainerStart;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Pidfd;

/**
 * Finds the /dev/shm tmpfs of a container that is starting, through the pid its runtime's OCI
 * hook names: a pidfd on that process first (so that the pid cannot come to mean another process
 * while it is looked at), then the mount its own mountinfo shows at its root filesystem's
 * {@code /dev/shm} (before pivot_root, where createRuntime hooks run) or at {@code /dev/shm}
 * (after it), reached as {@code /proc/PID/root/...}. Only a tmpfs counts, whole (its root, not a
 * bind of a directory), in a mount namespace other than shmguard's; one owned by another user
 * namespace is only reported, as discovery does. The remounter checks on its handle that the path
 * still leads to that very mount (mount id and device) before it changes anything.
 *
 * <pre>{@code
 * try (ContainerShmFinder.Found f = new ContainerShmFinder(paths, false).find(start)) {
 *   if (f.mount() != null) { ... size f.mount(), within f.memoryLimitBytes() ... }
 * }
 * }</pre>
 */
public final class ContainerShmFinder {
  private static final String SHM = "/dev/shm";
  /** A cgroup v1 limit at or above this (2^62) is the kernel's "no limit", rounded down to pages. */
  private static final long V1_UNLIMITED = 1L << 62;
  private final HostPaths paths;
  private final boolean actInUserNamespaces;

  public ContainerShmFinder(HostPaths paths, boolean actInUserNamespaces) {
    this.paths = paths;
    this.actInUserNamespaces = actInUserNamespaces;
  }

  /**
   * What was found: the container's own tmpfs ({@code mount}), or null with {@code none} saying
   * why there is nothing of its own to size; its cgroup's memory limit, null when it has none.
   * Holds the pidfd until closed.
   */
  public static final class Found implements AutoCloseable {
    private final int pidfd;
    private final ShmMount mount;
    private final Long memoryLimitBytes;
    private final String none;

    Found(int pidfd, ShmMount mount, Long memoryLimitBytes, String none) {
      this.pidfd = pidfd;
      this.mount = mount;
      this.memoryLimitBytes = memoryLimitBytes;
      this.none = none;
    }

    public ShmMount mount() {
      return mount;
    }

    public Long memoryLimitBytes() {
      return memoryLimitBytes;
    }

    public String none() {
      return none;
    }

    /** Whether the process the hook named still runs: what was read through its pid was its. */
    public boolean stillRunning() throws IOException {
      return Pidfd.alive(pidfd);
    }

    @Override
    public void close() {
      Pidfd.close(pidfd);
    }
  }

  /** Finds {@code c}'s /dev/shm; an IOException saying why when its process cannot be read or is not {@code c}'s. */
  public Found find(ContainerStart c) throws IOException {
    int fd;
    try {
      fd = Pidfd.open(c.pid());
    } catch (NoSuchFileException e) {
      throw new IOException("its process, pid " + c.pid() + ", has exited");
    }
    try {
      Found f = find(c, fd);
      if (!Pidfd.alive(fd)) {
        throw new IOException("its process, pid " + c.pid() + ", exited while shmguard looked at it");
      }
      return f;
    } catch (IOException | RuntimeException e) {
      Pidfd.close(fd);
      throw e;
    }
  }

  private Found find(ContainerStart c, int fd) throws IOException {
    String pid = Integer.toString(c.pid());
    String cgroup = ProcFiles.readOrNull(paths.proc(pid, "cgroup"));
    if (cgroup == null) {
      throw new IOException("its process, pid " + c.pid() + ", has exited");
    }
    String label = ContainerLabel.fromCgroupFile(cgroup);
    int colon = label == null ? -1 : label.indexOf(':');
    if (colon > 0 && label.substring(colon + 1).matches("[0-9a-f]{12}") && !c.id().startsWith(label.substring(colon + 1))) {
      throw new IOException("pid " + c.pid() + " runs in " + label + ", not in container " + c.shortId());
    }
    String reference = paths.isSystemRoot() ? "self" : "1";
    String theirs = ProcFiles.readLinkOrNull(paths.proc(pid, "ns", "mnt"));
    if (theirs == null) {
      throw new IOException("the mount namespace of pid " + c.pid() + " cannot be read");
    }
    if (theirs.equals(ProcFiles.readLinkOrNull(paths.proc(reference, "ns", "mnt")))) {
      return new Found(fd, null, null, "its process shares shmguard's mount namespace, so its /dev/shm is the host's");
    }
    String root = ProcFiles.readLinkOrNull(paths.proc(pid, "root"));
    String point = "/".equals(root) && c.rootfs() != null ? join(c.rootfs(), SHM) : SHM;
    MountEntry shm = null;
    for (MountEntry e : MountEntry.parseAll(read(paths.proc(pid, "mountinfo"), c))) {
      if (e.mountPoint().equals(point)) {
        shm = e; // the last one there covers the others
      }
    }
    if (shm == null || !shm.isTmpfs()) {
      return new Found(fd, null, null, "no tmpfs of its own is mounted at " + point + " (" + (shm == null ? "nothing" : shm.fsType()) + ")");
    }
    for (MountEntry e : MountEntry.parseAll(read(paths.proc(reference, "mountinfo"), c))) {
      if (e.mountPoint().equals(SHM) && e.dev().equals(shm.dev())) {
        return new Found(fd, null, null, "it shares the host's /dev/shm (--ipc=host), which shmguard sizes as the host's");
      }
    }
    NsOwners.Owner owner = new NsOwners(paths, reference, actInUserNamespaces).of(c.pid());
    String reportOnly = owner.problem();
    if (reportOnly == null && !shm.root().equals("/")) {
      reportOnly = "it shows the directory " + shm.root() + " of its tmpfs, not the tmpfs's root";
    }
    String path = paths.proc(pid, "root").toString() + point;
    ShmMount m = new ShmMount(shm.dev(), path, SHM, MountOrigin.NAMESPACE, shm.superOptions(), theirs, List.of(c.pid()),
        label != null ? label : "container:" + c.shortId(), null, shm.mountId(), paths.proc(pid, "mountinfo").toString(),
        reportOnly, owner.uid());
    return new Found(fd, m, memoryLimit(cgroup), null);
  }

  private static String read(Path mountinfo, ContainerStart c) throws IOException {
    String text = ProcFiles.readOrNull(mountinfo);
    if (text == null) {
      throw new IOException("its process, pid " + c.pid() + ", has exited");
    }
    return text;
  }

  private static String join(String rootfs, String inside) {
    String r = rootfs;
    while (r.length() > 1 && r.endsWith("/")) {
      r = r.substring(0, r.length() - 1);
    }
    return r.equals("/") ? inside : r + inside;
  }

  /**
   * The lowest memory limit of the process's memory cgroup and its ancestors (cgroup v2
   * {@code memory.max}, or v1 {@code memory.limit_in_bytes}), or null when none is set.
   */
  Long memoryLimit(String cgroupFile) {
    Path base = paths.root().resolve("sys/fs/cgroup");
    Long lowest = null;
    for (String line : cgroupFile.split("\n")) {
      String[] f = line.split(":", 3);
      if (f.length < 3) {
        continue;
      }
      List<Path> files;
      if (f[0].equals("0") && f[1].isEmpty()) {
        files = List.of(base, base.resolve("unified")).stream().map(b -> b.resolve(rel(f[2]))).toList();
        lowest = min(lowest, lowestUp(files, "memory.max", base));
      } else if (List.of(f[1].split(",")).contains("memory")) {
        lowest = min(lowest, lowestUp(List.of(base.resolve("memory").resolve(rel(f[2]))), "memory.limit_in_bytes", base));
      }
    }
    return lowest;
  }

  private static String rel(String cgroupPath) {
    return cgroupPath.startsWith("/") ? cgroupPath.substring(1) : cgroupPath;
  }

  private static Long lowestUp(List<Path> dirs, String file, Path base) {
    Long lowest = null;
    for (Path dir : dirs) {
      for (Path d = dir; d != null && d.startsWith(base); d = d.getParent()) {
        lowest = min(lowest, limitIn(d.resolve(file)));
      }
    }
    return lowest;
  }

  private static Long limitIn(Path file) {
    try {
      String v = Files.readString(file).strip();
      if (v.equals("max")) {
        return null;
      }
      long bytes = Long.parseLong(v);
      return bytes >= V1_UNLIMITED ? null : bytes;
    } catch (IOException | NumberFormatException e) {
      return null; // no such controller there, or not a limit
    }
  }

  private static Long min(Long a, Long b) {
    return a == null ? b : b == null ? a : Long.valueOf(Math.min(a, b));
  }
}
