package org.shmguard.model;

import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything one observation saw, frozen: the decide stage reads only this.
 *
 * @param livePids every process the /proc pass found alive with an address space (not zombies or kernel threads)
 * @param processes details of every process that holds something on a watched mount
 * @param problems why the pass cannot be trusted for reaping; empty when it read every process
 * @param warnings things an operator should know that do not stop reaping
 * @param hostPidNamespace whether shmguard runs in a PID namespace that sees every process
 * @param contents what each mount's listing counted; {@code segments} holds at most
 *     {@link MountContents#limit()} of each mount's files, the ones a reap pattern allows
 * @param creators the live processes that may be the creators unheld files' names give by pid
 * @param coverage what the pass left unexamined over the whole host (the global budget)
 * @param torchManagers the live {@code torch_shm_manager} processes and whom they serve, where looked for
 * @param shmOfNamespace the device of the watched tmpfs each mount namespace discovery read shows at
 *     /dev/shm, by the namespace's inode number ({@code /proc/PID/ns/mnt}); shmguard's own among them
 */
public record Snapshot(
    Instant takenAt,
    List<ShmMount> mounts,
    List<Segment> segments,
    HolderIndex holders,
    BitSet livePids,
    Map<Integer, ProcessInfo> processes,
    List<String> problems,
    List<String> warnings,
    boolean hostPidNamespace,
    int processesScanned,
    List<MountContents> contents,
    CreatorCandidates creators,
    Coverage coverage,
    TorchManagers torchManagers,
    Map<Long, Dev> shmOfNamespace) {

  /** A snapshot whose namespaces' /dev/shm are those its mounts were found through (fixtures). */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned, List<MountContents> contents, CreatorCandidates creators, Coverage coverage,
      TorchManagers torchManagers) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, creators, coverage, torchManagers, shmOfNamespaces(mounts));
  }

  /** A snapshot that did not look for PyTorch's shm managers: no file waits on one. */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned, List<MountContents> contents, CreatorCandidates creators, Coverage coverage) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, creators, coverage, TorchManagers.none());
  }

  /** A snapshot that looked up no creator pid: no name's creator can be proved dead from it. */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned, List<MountContents> contents, Coverage coverage) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, CreatorCandidates.none(), coverage);
  }

  /** A snapshot listed without a global budget (fixtures), with {@code creators} as its creator candidates. */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned, List<MountContents> contents, CreatorCandidates creators) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, creators, Coverage.none(segments.size()));
  }

  /** A snapshot whose segments are every file of its mounts (fixtures): the counts are made from them. */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, mounts.stream().map(m -> MountContents.ofAll(m.dev(), segments)).toList());
  }

  /** A snapshot of mounts listed without a global budget (fixtures): nothing left out beyond each mount's counts. */
  public Snapshot(Instant takenAt, List<ShmMount> mounts, List<Segment> segments, HolderIndex holders, BitSet livePids,
      Map<Integer, ProcessInfo> processes, List<String> problems, List<String> warnings, boolean hostPidNamespace,
      int processesScanned, List<MountContents> contents) {
    this(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, CreatorCandidates.none(), Coverage.none(segments.size()));
  }

  public Snapshot {
    Objects.requireNonNull(takenAt, "takenAt");
    mounts = List.copyOf(mounts);
    segments = List.copyOf(segments);
    Objects.requireNonNull(holders, "holders");
    livePids = (BitSet) livePids.clone();
    processes = Map.copyOf(processes);
    problems = List.copyOf(problems);
    warnings = List.copyOf(warnings);
    contents = List.copyOf(contents);
    Objects.requireNonNull(creators, "creators");
    Objects.requireNonNull(coverage, "coverage");
    Objects.requireNonNull(torchManagers, "torchManagers");
    shmOfNamespace = Map.copyOf(shmOfNamespace);
  }

  /**
   * Each mount's namespace ("mnt:[INODE]") to its device, for the mounts that are a namespace's
   * /dev/shm: discovery's record of where each mount was first found, without the namespaces that
   * joined it.
   */
  private static Map<Long, Dev> shmOfNamespaces(List<ShmMount> mounts) {
    Map<Long, Dev> byNamespace = new java.util.HashMap<>();
    for (ShmMount m : mounts) {
      String ns = m.namespace();
      if ("/dev/shm".equals(m.mountPoint()) && ns != null && ns.startsWith("mnt:[") && ns.endsWith("]")) {
        try {
          byNamespace.putIfAbsent(Long.parseLong(ns.substring(5, ns.length() - 1)), m.dev());
        } catch (NumberFormatException e) {
          // not a namespace's inode: nothing to record
        }
      }
    }
    return byNamespace;
  }

  /** The same snapshot with {@code found} as its creator candidates (fixtures). */
  public Snapshot withCreators(CreatorCandidates found) {
    return new Snapshot(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, found, coverage, torchManagers, shmOfNamespace);
  }

  /** The same snapshot with {@code found} as the PyTorch shm managers it saw (fixtures). */
  public Snapshot withTorchManagers(TorchManagers found) {
    return new Snapshot(takenAt, mounts, segments, holders, livePids, processes, problems, warnings, hostPidNamespace,
        processesScanned, contents, creators, coverage, found, shmOfNamespace);
  }

  @Override
  public BitSet livePids() {
    return (BitSet) livePids.clone();
  }

  public boolean isAlive(int pid) {
    return livePids.get(pid);
  }

  /** True when every process was read: only then may anything be reaped on this evidence. */
  public boolean complete() {
    return problems.isEmpty();
  }

  /** What the listing of the mount on {@code dev} counted, or null if that mount was not listed. */
  public MountContents contents(Dev dev) {
    for (MountContents c : contents) {
      if (c.dev().equals(dev)) {
        return c;
      }
    }
    return null;
  }

  /** What the pass left unexamined, in one sentence (the mounts' counts and the global budget's), or null. */
  public String notExamined() {
    return coverage.describe(contents.stream().mapToLong(MountContents::unexamined).sum());
  }

  /**
   * The watched tmpfs that the mount namespace with inode {@code namespaceInode} shows at /dev/shm,
   * or null when discovery did not read that namespace or its /dev/shm is not watched.
   */
  public ShmMount shmOf(long namespaceInode) {
    Dev dev = shmOfNamespace.get(namespaceInode);
    return dev == null ? null : mount(dev);
  }

  public ShmMount mount(Dev dev) {
    for (ShmMount m : mounts) {
      if (m.dev().equals(dev)) {
        return m;
      }
    }
    return null;
  }
}
