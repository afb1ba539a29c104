package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.ProcCalls;

/**
 * Finds the shm tmpfs mounts to watch: the /dev/shm of shmguard's own mount namespace, the tmpfs
 * at /dev/shm of every other mount namespace (containers, pods), the tmpfs that runtimes mount
 * on the host for pods and containers whether or not they run ({@link RuntimeVolumes}), and
 * configured mount points.
 * Each namespace's mountinfo is read once; each tmpfs appears once, by device. Each is reached
 * only through a path verified to lead to that very mount ({@link MountReach}), and is marked
 * report-only where shmguard cannot trust what it is: a namespace an ordinary user's user
 * namespace owns ({@link NsOwners}), or a mount of a directory of a tmpfs rather than its root.
 * Any user can make thousands of namespaces: of those another user namespace owns, at most
 * {@code namespaces.reportLimit} are read per discovery, in turn from each user, and the rest only
 * counted; namespaces the host's user namespace owns (root's containers) are always all read.
 *
 * <pre>{@code
 * MountDiscovery.Result found = new MountDiscovery(HostPaths.system()).discover(true, List.of());
 * }</pre>
 */
public final class MountDiscovery {
  static final String SHM = "/dev/shm";
  /** How many pids of a namespace to remember: enough to reach its mount if one exits. */
  private static final int PIDS_PER_NAMESPACE = ShmMount.PIDS_LISTED;
  /** Who owns the mounts of the host's own mount namespace: its user namespace, made by root. */
  private static final Long HOSTS_UID = 0L;

  private final HostPaths paths;
  private final ProcessDetails details;
  private final boolean actInUserNamespaces;
  private final int reportLimit;
  private final RuntimeVolumes volumes;

  public MountDiscovery(HostPaths paths) {
    this(paths, false);
  }

  public MountDiscovery(HostPaths paths, boolean actInUserNamespaces) {
    this(paths, actInUserNamespaces, DEFAULT_REPORT_LIMIT);
  }

  /** namespaces.reportLimit's shipped default. */
  public static final int DEFAULT_REPORT_LIMIT = 256;

  /**
   * @param actInUserNamespaces whether a namespace owned by a user namespace other than the
   *     host's (one an ordinary user can make) may be acted on; when false it is only reported
   * @param reportLimit the most namespaces owned by other user namespaces that one discovery reads,
   *     taken in turn from each uid; the others are counted ({@link Result#namespacesLeftOut})
   */
  public MountDiscovery(HostPaths paths, boolean actInUserNamespaces, int reportLimit) {
    this(paths, actInUserNamespaces, reportLimit, RuntimeRoots.DEFAULTS);
  }

  /** @param runtimes where to look for the shm tmpfs of pods and containers ({@link RuntimeVolumes}) */
  public MountDiscovery(HostPaths paths, boolean actInUserNamespaces, int reportLimit, RuntimeRoots runtimes) {
    if (reportLimit < 0) {
      throw new IllegalArgumentException("reportLimit must not be negative: " + reportLimit);
    }
    this.paths = paths;
    this.details = new ProcessDetails(paths);
    this.actInUserNamespaces = actInUserNamespaces;
    this.reportLimit = reportLimit;
    this.volumes = new RuntimeVolumes(paths, runtimes);
  }

  /**
   * What discovery found, and what it could not use.
   *
   * @param namespacesLeftOut namespaces of other user namespaces beyond the report limit, not read
   * @param shmOfNamespace the device each mount namespace read shows at /dev/shm, by the
   *     namespace's inode number, for the devices in {@code mounts}: shmguard's own, and every
   *     other namespace's, those that joined another's tmpfs (a pod's containers) included
   */
  public record Result(List<ShmMount> mounts, List<String> warnings, int namespacesLeftOut, Map<Long, Dev> shmOfNamespace) {
    public Result {
      mounts = List.copyOf(mounts);
      warnings = List.copyOf(warnings);
      shmOfNamespace = Map.copyOf(shmOfNamespace);
    }

    public Result(List<ShmMount> mounts, List<String> warnings) {
      this(mounts, warnings, 0, Map.of());
    }
  }

  /** A way to reach a mount: a path, and the mount (by id, as {@code mountinfo} lists it) it must lead to. */
  private record Candidate(String path, MountEntry entry, String mountinfo) {}

  public Result discover(boolean auto, List<String> configured) {
    List<String> warnings = new ArrayList<>();
    List<MountEntry> own;
    Path ownMountinfo = paths.proc(referencePid(), "mountinfo");
    try {
      // Not Files.readString, which refuses bytes that are not UTF-8: any user can mount FUSE (fusermount3)
      // at such a name, and mountinfo escapes only space, tab, newline and backslash.
      own = MountEntry.parseAll(new String(Files.readAllBytes(ownMountinfo), StandardCharsets.UTF_8));
    } catch (IOException e) {
      warnings.add("cannot read " + ownMountinfo + ": " + e.getMessage());
      return new Result(List.of(), warnings);
    }
    String ownNs = ownNamespace();
    Map<Dev, List<MountEntry>> hostWhole = hostMountsOfWholeTmpfs(own);
    Map<Dev, ShmMount> found = new LinkedHashMap<>();
    Map<Long, Dev> shmOfNamespace = new HashMap<>();
    long ownInode = inodeOf(ownNs);
    int leftOut = 0;
    if (auto) {
      MountEntry hostShm = visibleAt(own, SHM);
      if (hostShm == null) {
        warnings.add("nothing is mounted at /dev/shm in the host's mount namespace");
      } else if (!hostShm.isTmpfs()) {
        warnings.add("/dev/shm is " + hostShm.fsType() + ", not tmpfs; not watched");
      } else {
        List<Candidate> candidates = new ArrayList<>(List.of(new Candidate(paths.resolve(SHM), hostShm, ownMountinfo.toString())));
        if (!paths.isSystemRoot()) {
          candidates.add(new Candidate(paths.proc("1", "root", "dev", "shm").toString(), hostShm, ownMountinfo.toString()));
        }
        Candidate reach = reachable(hostShm.dev(), candidates, warnings);
        if (reach != null) {
          found.put(hostShm.dev(), new ShmMount(hostShm.dev(), reach.path(), SHM, MountOrigin.HOST,
              hostShm.superOptions(), ownNs, List.of(), null, null, reach.entry().mountId(), reach.mountinfo(),
              rootProblem(hostShm), HOSTS_UID));
          shmOfNamespace.put(ownInode, hostShm.dev());
        }
      }
      volumes.discover(own, ownNs, ownMountinfo.toString(), found, warnings);
      leftOut = discoverNamespaces(ownNs, ownMountinfo.toString(), hostWhole, found, shmOfNamespace, warnings);
      volumes.namePods(found);
    }
    for (String path : configured) {
      MountEntry e = visibleAt(own, path);
      if (e == null) {
        warnings.add("configured mount " + path + " is not a mount point; not watched");
      } else if (!e.isTmpfs()) {
        warnings.add("configured mount " + path + " is " + e.fsType() + ", not tmpfs; not watched");
      } else if (!found.containsKey(e.dev()) || !found.get(e.dev()).mayAct()) {
        // Root named it: an ordinary user's namespace that shows the same tmpfs cannot make it report-only.
        Candidate reach = reachable(e.dev(), List.of(new Candidate(paths.resolve(path), e, ownMountinfo.toString())), warnings);
        if (reach != null) {
          found.put(e.dev(), new ShmMount(e.dev(), reach.path(), path, MountOrigin.CONFIGURED,
              e.superOptions(), ownNs, List.of(), null, null, e.mountId(), reach.mountinfo(), rootProblem(e), HOSTS_UID));
        }
      }
      if (path.equals(SHM) && e != null && e.isTmpfs()) {
        shmOfNamespace.putIfAbsent(ownInode, e.dev()); // "mounts: [/dev/shm]" without auto
      }
    }
    shmOfNamespace.values().removeIf(dev -> !found.containsKey(dev));
    return new Result(new ArrayList<>(found.values()), warnings, leftOut, shmOfNamespace);
  }

  /**
   * The first of {@code candidates} that leads now to the root of the mount it names. A mount
   * point can be covered by a later mount, a host path can lead elsewhere inside a container, a
   * process's root can be a chroot: only a path that opens onto that very mount (its id and
   * device) is used.
   */
  private static Candidate reachable(Dev dev, List<Candidate> candidates, List<String> warnings) {
    for (Candidate c : candidates) {
      if (MountReach.leadsTo(c.path(), c.entry().mountId(), dev)) {
        return c;
      }
      if (PathWalks.shared().stuckPaths().contains(c.path())) {
        // a root that stopped answering: the other candidates of a namespace walk through it too
        warnings.add("the tmpfs with device " + dev + " is not watched for now: " + c.path() + " is not answering");
        return null;
      }
    }
    warnings.add("the tmpfs with device " + dev + " cannot be reached (tried "
        + String.join(", ", candidates.stream().map(Candidate::path).toList()) + "); not watched");
    return null;
  }

  /** One other mount namespace's /dev/shm, as one of its processes sees it. */
  private record Found(String ns, List<Integer> pids, int readFrom, MountEntry shm, String reportOnly, Long ownerUid) {}

  /** @return how many namespaces of other user namespaces were left out, beyond the report limit */
  private int discoverNamespaces(String ownNs, String ownMountinfo, Map<Dev, List<MountEntry>> hostWhole,
      Map<Dev, ShmMount> found, Map<Long, Dev> shmOfNamespace, List<String> warnings) {
    Map<String, List<Integer>> pidsByNs = new LinkedHashMap<>();
    // Raw readlinkat relative to one /proc handle: this runs for every process on every pass.
    try (ProcCalls proc = ProcCalls.open(paths.proc().toString())) {
      // The namespace as its inode number, no String per process: the link reads "mnt:[INODE]".
      long ownInode = inodeOf(ownNs);
      for (int pid : proc.pids()) {
        long inode = proc.namespaceInode(pid, "mnt");
        if (inode < 0) {
          continue; // gone, or not readable
        }
        if (inode == ownInode) {
          continue;
        }
        String ns = "mnt:[" + inode + "]";
        List<Integer> pids = pidsByNs.computeIfAbsent(ns, k -> new ArrayList<>());
        if (pids.size() < PIDS_PER_NAMESPACE) {
          pids.add(pid);
        }
      }
    } catch (IOException e) {
      warnings.add("cannot list " + paths.proc() + ": " + e.getMessage());
      return 0;
    }
    NsOwners owners = new NsOwners(paths, referencePid(), actInUserNamespaces);
    List<Map.Entry<String, List<Integer>>> toRead = new ArrayList<>();
    int leftOut = withinReportLimit(pidsByNs, owners, toRead);
    List<Found> namespaces = new ArrayList<>();
    for (Map.Entry<String, List<Integer>> ns : toRead) {
      List<Integer> pids = ns.getValue();
      Found f = readShmOf(ns.getKey(), pids, owners, warnings);
      if (f != null && f.shm().isTmpfs()) {
        namespaces.add(f);
      }
    }
    // Namespaces shmguard may act in first: a device one of them shows is theirs, whoever else binds it.
    namespaces.sort(Comparator.comparing(f -> f.reportOnly() != null));
    for (Found f : namespaces) {
      MountEntry shm = f.shm();
      if (shm.root().equals("/")) {
        // which tmpfs this namespace's processes see at /dev/shm (ADVISE without dev=); kept if it is watched
        shmOfNamespace.put(inodeOf(f.ns()), shm.dev());
      }
      ShmMount known = found.get(shm.dev());
      if (known != null) {
        if (known.origin().ofContainer() && known.mayAct() == (f.reportOnly() == null)) {
          List<Integer> merged = new ArrayList<>(known.pids());
          merged.addAll(f.pids());
          found.put(shm.dev(), known.withPids(merged.subList(0, Math.min(merged.size(), PIDS_PER_NAMESPACE))));
        }
        continue;
      }
      List<Candidate> candidates = new ArrayList<>();
      if (shm.root().equals("/")) {
        // The host's own mount of the same whole tmpfs shows the same root directory.
        hostWhole.getOrDefault(shm.dev(), List.of())
            .forEach(h -> candidates.add(new Candidate(paths.resolve(h.mountPoint()), h, ownMountinfo)));
      }
      candidates.add(new Candidate(paths.proc(Integer.toString(f.readFrom()), "root", "dev", "shm").toString(), shm,
          paths.proc(Integer.toString(f.readFrom()), "mountinfo").toString()));
      Candidate reach = reachable(shm.dev(), candidates, warnings);
      if (reach != null) {
        found.put(shm.dev(), new ShmMount(shm.dev(), reach.path(), SHM, MountOrigin.NAMESPACE, shm.superOptions(),
            f.ns(), f.pids(), details.container(f.pids().get(0)), null, reach.entry().mountId(), reach.mountinfo(),
            f.reportOnly(), f.ownerUid()));
      }
    }
    return leftOut;
  }

  /**
   * Puts in {@code toRead} every namespace the host's user namespace owns (root's containers), and
   * at most {@link #reportLimit} of the others, one from each uid in turn (the uid the namespace's
   * first process runs as on the host), so that one user's thousands of namespaces cannot crowd out
   * another user's; returns how many others were left out. Any user can make as many namespaces as
   * the kernel lets them, each with a tmpfs: this keeps what a pass holds of them bounded, and no
   * user namespace's mountinfo is read beyond the limit.
   */
  private int withinReportLimit(Map<String, List<Integer>> pidsByNs, NsOwners owners,
      List<Map.Entry<String, List<Integer>>> toRead) {
    Map<Integer, ArrayDeque<Map.Entry<String, List<Integer>>>> foreignByUid = new TreeMap<>();
    int foreign = 0;
    for (Map.Entry<String, List<Integer>> ns : pidsByNs.entrySet()) {
      ns.getValue().sort(null);
      int pid = ns.getValue().get(0);
      if (owners.foreign(pid)) {
        foreignByUid.computeIfAbsent(uidOf(pid), u -> new ArrayDeque<>()).add(ns);
        foreign++;
      } else {
        toRead.add(ns);
      }
    }
    int taken = 0;
    while (taken < reportLimit && !foreignByUid.isEmpty()) {
      var users = foreignByUid.values().iterator();
      while (users.hasNext() && taken < reportLimit) {
        var queue = users.next();
        toRead.add(queue.poll());
        taken++;
        if (queue.isEmpty()) {
          users.remove();
        }
      }
    }
    return foreign - taken;
  }

  /** The uid that owns /proc/PID (the process's effective uid on the host), or -1 if it has gone. */
  private int uidOf(int pid) {
    try {
      return (Integer) Files.getAttribute(paths.proc(Integer.toString(pid)), "unix:uid");
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** The inode number in a namespace link's text ("mnt:[4026531841]"), or -1. */
  private static long inodeOf(String ns) {
    if (ns == null || !ns.startsWith("mnt:[") || !ns.endsWith("]")) {
      return -1;
    }
    try {
      return Long.parseLong(ns.substring(5, ns.length() - 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The tmpfs at /dev/shm in the namespace of the first of {@code pids} that can be read. */
  private Found readShmOf(String ns, List<Integer> pids, NsOwners owners, List<String> warnings) {
    for (int pid : pids) {
      try {
        Shown shown = shownAt(paths.proc(Integer.toString(pid), "mountinfo"), SHM);
        if (shown != null) {
          MountEntry shm = shown.entry();
          if (shm == null) {
            return null;
          }
          List<String> why = new ArrayList<>();
          NsOwners.Owner owner = owners.of(pid);
          if (owner.problem() != null) {
            why.add(owner.problem());
          }
          String root = rootProblem(shm);
          if (root != null) {
            why.add(root);
          }
          return new Found(ns, pids, pid, shm, why.isEmpty() ? null : String.join("; ", why), owner.uid());
        }
      } catch (AccessDeniedException e) {
        warnings.add("cannot read the mounts of pid " + pid + ": permission denied");
        return null;
      }
    }
    return null;
  }

  /** What a mountinfo file shows at a mount point: {@code entry} null if nothing is mounted there. */
  private record Shown(MountEntry entry) {}

  /**
   * The mount {@code mountinfo} shows at {@code mountPoint} (the last one there, which covers any
   * earlier one), read line by line and only that one kept: a user namespace's mountinfo can hold
   * tens of thousands of lines of 8 KiB, more than the daemon's whole heap. Null if the process has
   * gone.
   */
  private static Shown shownAt(Path mountinfo, String mountPoint) throws AccessDeniedException {
    String field = " " + mountPoint + " ";
    MountEntry[] last = {null};
    boolean read = ProcFiles.forEachLine(mountinfo, line -> {
      if (line.contains(field)) {
        MountEntry e = MountEntry.parse(line);
        if (e != null && e.mountPoint().equals(mountPoint)) {
          last[0] = e;
        }
      }
    });
    return read ? new Shown(last[0]) : null;
  }

  /** Why a mount that shows a directory of its tmpfs, not the tmpfs's root, is only reported. */
  private static String rootProblem(MountEntry e) {
    return e.root().equals("/") ? null
        : "it shows the directory " + e.root() + " of its tmpfs, not the tmpfs's root, so what shmguard would act on is not what its users see";
  }

  /** For each tmpfs device mounted whole in the host's namespace, its mounts, shortest mount point first. */
  private static Map<Dev, List<MountEntry>> hostMountsOfWholeTmpfs(List<MountEntry> own) {
    Map<Dev, List<MountEntry>> byDev = new HashMap<>();
    for (MountEntry e : own) {
      if (e.isTmpfs() && e.root().equals("/")) {
        byDev.computeIfAbsent(e.dev(), d -> new ArrayList<>()).add(e);
      }
    }
    byDev.values().forEach(list -> list.sort(Comparator.comparingInt(e -> e.mountPoint().length())));
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
