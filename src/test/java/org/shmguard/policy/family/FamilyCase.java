package org.shmguard.policy.family;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Assessment;
import org.shmguard.text.Glob;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.Verdict;

/**
 * One row of a family's table, with no kernel: a file, the processes holding it now, those seen
 * holding it in the pass before and whether they still run, the configuration; judged through
 * {@link Judge#judge} with the shipped defaults unless the row says otherwise.
 */
final class FamilyCase {
  static final Instant NOW = Instant.parse("2026-11-24T03:00:00Z");
  private static final Dev DEV = Dev.of(0, 42);

  private final String what;
  private String name = "nccl-AbC123";
  private long size = 4096;
  private Duration age = Duration.ofSeconds(1);
  private final List<Integer> holdersNow = new ArrayList<>();
  private final Map<Integer, Long> seenBefore = new LinkedHashMap<>();
  private final Map<Integer, Long> aliveNow = new HashMap<>();
  private MountOrigin origin = MountOrigin.HOST;
  private List<Glob> patterns = List.of(Glob.of("nccl-*"));
  private final Map<String, FamilySettings> settings = new HashMap<>();
  private Duration bornAgo;
  private final List<CreatorCandidates.Candidate> elsewhere = new ArrayList<>();
  private final Map<Integer, Duration> startedAgo = new HashMap<>();
  private String lookupProblem;
  private boolean lookedUp = true;
  private String mountPoint = "/dev/shm";
  private List<Integer> mountPids = List.of();
  private final List<Integer> otherFileHolders = new ArrayList<>();
  private List<Integer> containerSeen = List.of();
  private final List<String> problems = new ArrayList<>();
  private final List<org.shmguard.model.TorchManagers.Manager> torchManagers = new ArrayList<>();
  private String torchManagersProblem;
  private final Map<Integer, String> torchManagersMissedByUid = new HashMap<>();

  private FamilyCase(String what) {
    this.what = what;
  }

  static FamilyCase of(String what) {
    return new FamilyCase(what);
  }

  FamilyCase file(String fileName, long bytes, Duration unchangedFor) {
    this.name = fileName;
    this.size = bytes;
    this.age = unchangedFor;
    return this;
  }

  /** A process holds the file now (it maps it). */
  FamilyCase heldBy(int pid) {
    holdersNow.add(pid);
    aliveNow.putIfAbsent(pid, 1000L + pid);
    return this;
  }

  /** A process was seen holding the file in the previous pass and has exited since. */
  FamilyCase heldBeforeByExited(int pid) {
    seenBefore.put(pid, 1000L + pid);
    return this;
  }

  /** A process was seen holding the file in the previous pass and still runs (it let go). */
  FamilyCase heldBeforeByLiving(int pid) {
    seenBefore.put(pid, 1000L + pid);
    aliveNow.put(pid, 1000L + pid);
    return this;
  }

  /** A process with this pid runs now, started at {@code startTicks}. */
  FamilyCase running(int pid, long startTicks) {
    aliveNow.put(pid, startTicks);
    return this;
  }

  /** A process with this pid runs now in shmguard's own PID namespace, started {@code ago}. */
  FamilyCase runningSince(int pid, Duration ago) {
    aliveNow.put(pid, 5000L + pid);
    startedAgo.put(pid, ago);
    return this;
  }

  /**
   * A process of another PID namespace ({@code ns}) has the name's pid there and {@code hostPid} in
   * shmguard's, started {@code ago}; {@code reaches}: its mount namespace shows the file's tmpfs.
   */
  FamilyCase runningInPidNamespace(long ns, int hostPid, Duration ago, boolean reaches) {
    aliveNow.putIfAbsent(hostPid, 7000L + hostPid);
    elsewhere.add(new CreatorCandidates.Candidate(hostPid, ns, false, 7000L + hostPid, nanos(NOW.minus(ago)),
        reaches ? Set.of(DEV) : Set.of(Dev.of(0, 99))));
    return this;
  }

  /**
   * Like {@link #runningInPidNamespace}, reaching the file's tmpfs; {@code atShm}: at /dev/shm (a
   * container's view) or only elsewhere (the host's, under the kubelet's directory).
   */
  FamilyCase runningInPidNamespace(long ns, int hostPid, Duration ago, boolean reaches, boolean atShm) {
    aliveNow.putIfAbsent(hostPid, 7000L + hostPid);
    elsewhere.add(new CreatorCandidates.Candidate(hostPid, ns, ns == 4026531836L, 7000L + hostPid,
        nanos(NOW.minus(ago)), reaches ? Set.of(DEV) : Set.of(Dev.of(0, 99)), atShm ? Set.of(DEV) : Set.of()));
    return this;
  }

  /**
   * A process of {@code uid} (its every uid) has the name's pid in PID namespace {@code ns} and
   * {@code hostPid} in shmguard's, reaching the file's tmpfs, started an hour ago. The file's
   * owner is uid 1000.
   */
  FamilyCase runningAsUser(long ns, int hostPid, int uid) {
    aliveNow.putIfAbsent(hostPid, 7000L + hostPid);
    elsewhere.add(new CreatorCandidates.Candidate(hostPid, ns, ns == 4026531836L, 7000L + hostPid,
        nanos(NOW.minus(Duration.ofHours(1))), Set.of(DEV), null, Set.of(uid)));
    return this;
  }

  /** The file was born {@code ago} (statx btime); by default its birth time is not known. */
  FamilyCase bornAgo(Duration ago) {
    this.bornAgo = ago;
    return this;
  }

  /** The creator lookup could not read some process. */
  FamilyCase lookupMissed(String problem) {
    this.lookupProblem = problem;
    return this;
  }

  /** No creator pid was looked up (a snapshot made without the lookup). */
  FamilyCase notLookedUp() {
    this.lookedUp = false;
    return this;
  }

  private static long nanos(Instant t) {
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  FamilyCase onContainerMount() {
    origin = MountOrigin.NAMESPACE;
    return this;
  }

  /** The tmpfs is a pod's volume shmguard was configured to watch at {@code hostPath} (not /dev/shm). */
  FamilyCase onVolumeAt(String hostPath) {
    origin = MountOrigin.CONFIGURED;
    mountPoint = hostPath;
    return this;
  }

  /** The tmpfs is a kubelet emptyDir found on the host; {@code pids}: the processes of containers showing it at /dev/shm. */
  FamilyCase onPodVolume(Integer... pids) {
    origin = MountOrigin.VOLUME;
    mountPoint = "/var/lib/kubelet/pods/7c81/volumes/kubernetes.io~empty-dir/dshm";
    mountPids = List.of(pids);
    return this;
  }

  /** The tmpfs was found at /dev/shm of a container whose processes were {@code pids}. */
  FamilyCase onContainerMountOf(Integer... pids) {
    origin = MountOrigin.NAMESPACE;
    mountPids = List.of(pids);
    return this;
  }

  /** In the pass before, discovery found the tmpfs at /dev/shm of a container whose processes were {@code pids}. */
  FamilyCase afterContainer(Integer... pids) {
    containerSeen = List.of(pids);
    return this;
  }

  /** A process holds another file on the same tmpfs (it maps it). */
  FamilyCase otherFileHeldBy(int pid) {
    otherFileHolders.add(pid);
    aliveNow.putIfAbsent(pid, 1000L + pid);
    return this;
  }

  /** The /proc pass could not read some process. */
  FamilyCase incompletePass(String problem) {
    problems.add(problem);
    return this;
  }

  FamilyCase patterns(String... globs) {
    patterns = java.util.Arrays.stream(globs).map(Glob::of).toList();
    return this;
  }

  /**
   * A live torch_shm_manager (host pid {@code pid}, filesystem uid {@code uid}, started
   * {@code ago}) with {@code clients} connected, whose mount namespace has this tmpfs at /dev/shm
   * or not ({@code atShm}). The file is owned by uid 1000.
   */
  FamilyCase torchManager(int pid, int uid, int clients, Duration ago, boolean atShm) {
    torchManagers.add(new org.shmguard.model.TorchManagers.Manager(pid, uid, 4026531836L, 5000, nanos(NOW.minus(ago)),
        "/tmp/torch-shm-dir-Ab12Cd/manager.sock", clients, atShm ? Set.of(DEV) : Set.of()));
    return this;
  }

  /** The manager lookup could not read some process. */
  FamilyCase torchManagersMissed(String problem) {
    torchManagersProblem = problem;
    return this;
  }

  /** The manager lookup could not read a manager running as {@code uid} (the file's owner is uid 1000). */
  FamilyCase torchManagerMissedOf(int uid, String why) {
    torchManagersMissedByUid.put(uid, why);
    return this;
  }

  FamilyCase configured(String family, boolean reap, Duration grace) {
    settings.put(family, new FamilySettings(reap, grace));
    return this;
  }

  /** The verdict, with whether the plan reaps it. */
  Outcome judge() {
    ShmMount mount = new ShmMount(DEV, mountPoint, mountPoint, origin, "rw", null, mountPids, null,
        new ShmMount.Usage(64 << 20, 10 << 20, 54 << 20, 1000, 990), 7, "/proc/1/mountinfo", null, null);
    long t = NOW.minus(age).getEpochSecond() * 1_000_000_000L;
    Segment s = new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), 11, size, size, 0100600, 1000, 1, t, t,
        bornAgo == null ? -1 : nanos(NOW.minus(bornAgo)));
    HolderHistory history = HolderHistory.empty();
    if (!containerSeen.isEmpty()) {
      ShmMount inContainer = new ShmMount(DEV, "/proc/" + containerSeen.get(0) + "/root/dev/shm", "/dev/shm",
          MountOrigin.NAMESPACE, "rw", "mnt:[4026532999]", containerSeen, "podman:57c282395ef3", null);
      BitSet live = new BitSet();
      containerSeen.forEach(live::set);
      history = history.next(new Snapshot(NOW.minusSeconds(2), List.of(inContainer), List.of(s), HolderIndex.empty(),
          live, Map.of(), List.of(), List.of(), true, live.cardinality()));
    }
    if (!seenBefore.isEmpty()) {
      HolderIndex.Builder before = HolderIndex.builder();
      BitSet live = new BitSet();
      Map<Integer, ProcessInfo> infos = new HashMap<>();
      seenBefore.forEach((pid, start) -> {
        before.add(s.key(), new HolderRef(pid, Access.MAP, "/dev/shm/" + name, false, size));
        live.set(pid);
        infos.put(pid, new ProcessInfo(pid, "worker", 1000, "alice", null, start));
      });
      history = history.next(new Snapshot(NOW.minusSeconds(1), List.of(mount), List.of(s), before.build(), live, infos,
          List.of(), List.of(), true, live.cardinality()));
    }
    HolderIndex.Builder now = HolderIndex.builder();
    for (int pid : holdersNow) {
      now.add(s.key(), new HolderRef(pid, Access.MAP, "/dev/shm/" + name, false, size));
    }
    for (int pid : otherFileHolders) {
      now.add(new org.shmguard.model.FileKey(DEV, 12), new HolderRef(pid, Access.MAP, "/dev/shm/other", false, 4096));
    }
    BitSet live = new BitSet();
    Map<Integer, ProcessInfo> infos = new HashMap<>();
    aliveNow.forEach((pid, start) -> {
      live.set(pid);
      infos.put(pid, new ProcessInfo(pid, "worker", 1000, "alice", null, start));
    });
    Snapshot snap = new Snapshot(NOW, List.of(mount), List.of(s), now.build(), live, infos, problems, List.of(), true,
        live.cardinality()).withCreators(creators())
        .withTorchManagers(new org.shmguard.model.TorchManagers(true, torchManagers, torchManagersProblem,
            torchManagersMissedByUid));
    ReapPolicy policy = new ReapPolicy(Duration.ofMinutes(2), patterns, List.of(Glob.of("cuda.shm.*")), true,
        FamilyRules.of(settings));
    Judgement j = Judge.judge(snap, history, policy);
    Assessment a = j.segments().get(0);
    return new Outcome(a.verdict(), j.plan().candidates().contains(a), a.reason(), a.family(), a.kind());
  }

  /** What the creator lookup found: the named pid's live holders here and in other PID namespaces. */
  private CreatorCandidates creators() {
    OptionalInt named = FamilyRules.defaults().creatorPid(name);
    if (!lookedUp || named.isEmpty()) {
      return CreatorCandidates.none();
    }
    int pid = named.getAsInt();
    List<CreatorCandidates.Candidate> found = new ArrayList<>();
    if (aliveNow.containsKey(pid) && elsewhere.stream().noneMatch(c -> c.hostPid() == pid)) {
      Duration ago = startedAgo.get(pid);
      found.add(new CreatorCandidates.Candidate(pid, 4026531836L, true, aliveNow.get(pid),
          ago == null ? -1 : nanos(NOW.minus(ago)), null));
    }
    elsewhere.forEach(found::add);
    return new CreatorCandidates(Set.of(pid), found.isEmpty() ? Map.of() : Map.of(pid, found), lookupProblem);
  }

  @Override
  public String toString() {
    return what;
  }

  record Outcome(Verdict verdict, boolean reaped, String reason, String family, String kind) {}
}
