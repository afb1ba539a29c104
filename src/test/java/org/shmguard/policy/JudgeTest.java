package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.model.Use;
import org.shmguard.text.Glob;

/** The decide stage without a kernel: snapshots built by hand, time passed in. */
class JudgeTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-21T10:00:00Z");
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2),
      List.of(Glob.of("nccl-*")), List.of(Glob.of("cuda.shm.*")), true);
  private static final ShmMount MOUNT = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
      new ShmMount.Usage(64 << 20, 10 << 20, 54 << 20, 1000, 990));

  private final List<Segment> segments = new ArrayList<>();
  private final HolderIndex.Builder holders = HolderIndex.builder();
  private final BitSet live = new BitSet();
  private final Map<Integer, ProcessInfo> infos = new HashMap<>();
  private final List<String> problems = new ArrayList<>();
  private boolean hostPid = true;

  private Segment segment(String name, long ino, long size, Duration age) {
    long t = NOW.minus(age).getEpochSecond() * 1_000_000_000L;
    Segment s = new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), ino, size, size, 0100600, 1000, 1, t, t);
    segments.add(s);
    return s;
  }

  private void hold(Segment s, int pid, Access access, long startTicks) {
    // NCCL's ranks open and map their segments read-write
    holders.add(s.key(), new HolderRef(pid, access, "/dev/shm/" + s.displayName(), false, s.sizeBytes(), Use.WRITE));
    live.set(pid);
    infos.put(pid, new ProcessInfo(pid, "python3", 1000, "alice", "pod:1234", startTicks));
  }

  private Snapshot snapshot(Instant at) {
    return new Snapshot(at, List.of(MOUNT), segments, holders.build(), live, infos, problems, List.of(), hostPid, live.cardinality());
  }

  /** The same segments a moment later, nobody holding them, {@code alive} still running. */
  private Snapshot laterWithoutHolders(BitSet alive, Map<Integer, ProcessInfo> details) {
    return new Snapshot(NOW, List.of(MOUNT), segments, HolderIndex.empty(), alive, details, List.of(), List.of(), true, 1);
  }

  private static BitSet pids(int... pids) {
    BitSet b = new BitSet();
    for (int p : pids) {
      b.set(p);
    }
    return b;
  }

  private Judgement judge() {
    return Judge.judge(snapshot(NOW), HolderHistory.empty(), POLICY);
  }

  private static Verdict verdictOf(Judgement j, String name) {
    return j.segments().stream().filter(a -> a.segment().displayName().equals(name)).findFirst().orElseThrow().verdict();
  }

  @Test
  void unheldSegmentOlderThanGraceIsLeakedAndPlanned() {
    segment("nccl-Old001", 1, 9_637_892, Duration.ofMinutes(5));
    Judgement j = judge();
    assertThat(verdictOf(j, "nccl-Old001")).isEqualTo(Verdict.LEAKED);
    assertThat(j.plan().candidates()).hasSize(1);
    assertThat(j.segments().get(0).reason()).contains("unchanged for 5m").contains("grace 2m");
    assertThat(j.segments().get(0).kind()).isEqualTo("nccl-shm-recv");
  }

  @Test
  void unheldSegmentYoungerThanGraceWaits() {
    segment("nccl-New001", 1, 4_100, Duration.ofSeconds(30));
    Judgement j = judge();
    assertThat(verdictOf(j, "nccl-New001")).isEqualTo(Verdict.GRACE);
    assertThat(j.plan().isEmpty()).isTrue();
  }

  @Test
  void heldSegmentIsHeldWhateverItsAge() {
    Segment s = segment("nccl-Held01", 1, 34_210_180, Duration.ofDays(3));
    hold(s, 4242, Access.MAP, 100);
    Judgement j = judge();
    assertThat(verdictOf(j, "nccl-Held01")).isEqualTo(Verdict.HELD);
    assertThat(j.segments().get(0).reason()).isEqualTo("held by pid 4242 (map)");
    assertThat(j.segments().get(0).kind()).isEqualTo("nccl-proxy-pool (2.28-2.30)");
    assertThat(j.plan().isEmpty()).isTrue();
  }

  @Test
  void aReasonNamesThreeHoldersAndCountsTheRest() {
    Segment s = segment("nccl-Many01", 1, 9_637_892, Duration.ofSeconds(5));
    for (int pid = 101; pid <= 108; pid++) {
      hold(s, pid, Access.MAP, 100);
    }
    Judgement j = judge();
    assertThat(j.segments().get(0).reason()).isEqualTo("held by pid 101 (map), pid 102 (map), pid 103 (map) and 5 more");
  }

  @Test
  void zeroByteUnheldNcclFileIsFailedCreationEvenWhenYoung() {
    segment("nccl-Zero01", 1, 0, Duration.ofSeconds(1));
    segment("psm_0000000", 2, 0, Duration.ofSeconds(1));
    Judgement j = Judge.judge(snapshot(NOW), HolderHistory.empty(),
        new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*"), Glob.of("psm_*")), List.of(), true));
    assertThat(verdictOf(j, "nccl-Zero01")).isEqualTo(Verdict.FAILED_CREATION);
    assertThat(verdictOf(j, "psm_0000000")).isEqualTo(Verdict.GRACE);
  }

  @Test
  void deniedUnmatchedAndHardLinkedFilesAreIgnored() {
    segment("cuda.shm.0.1", 1, 4096, Duration.ofDays(1));
    segment("torch_1_2_3", 2, 4096, Duration.ofDays(1));
    long t = NOW.minus(Duration.ofDays(1)).getEpochSecond() * 1_000_000_000L;
    segments.add(new Segment(DEV, "nccl-Linked".getBytes(StandardCharsets.UTF_8), 3, 4100, 4100, 0100600, 0, 2, t, t));
    Judgement j = Judge.judge(snapshot(NOW), HolderHistory.empty(),
        new ReapPolicy(Duration.ZERO, List.of(Glob.of("*")), List.of(Glob.of("cuda.shm.*")), true));
    assertThat(verdictOf(j, "cuda.shm.0.1")).isEqualTo(Verdict.IGNORED);
    assertThat(verdictOf(j, "torch_1_2_3")).isEqualTo(Verdict.LEAKED);
    assertThat(verdictOf(j, "nccl-Linked")).isEqualTo(Verdict.IGNORED);
    assertThat(judge().segments()).filteredOn(a -> a.segment().displayName().equals("torch_1_2_3"))
        .singleElement().extracting(Assessment::reason).isEqualTo("no reap.patterns entry matches");
  }

  @Test
  void segmentWhoseHoldersAllExitedIsLeakedWithoutWaitingOutGrace() {
    Segment s = segment("nccl-Crash1", 1, 9_637_892, Duration.ofSeconds(5));
    hold(s, 100, Access.MAP, 5000);
    hold(s, 101, Access.FD, 5001);
    Snapshot before = snapshot(NOW.minusSeconds(1));
    HolderHistory history = HolderHistory.empty().next(before);

    Judgement j = Judge.judge(laterWithoutHolders(new BitSet(), Map.of()), history, POLICY);

    assertThat(verdictOf(j, "nccl-Crash1")).isEqualTo(Verdict.LEAKED);
    assertThat(j.segments().get(0).reason()).contains("every process that held it has exited").contains("100 python3 (alice, pod:1234)");
    assertThat(j.segments().get(0).lastHolders()).extracting(ProcessInfo::pid).containsExactly(100, 101);
  }

  @Test
  void aHolderWhoseDetailsALaterPassCouldNotReadKeepsItsNameFromHistoryOrIsJustPidN() {
    Segment s = segment("nccl-Named1", 1, 9_637_892, Duration.ofSeconds(5));
    hold(s, 100, Access.MAP, 5000);
    HolderHistory history = HolderHistory.empty().next(snapshot(NOW.minusSeconds(2)));
    hold(s, 101, Access.FD, 5001);
    // A pass that sees both holders but could read neither's details (they were exiting).
    history = history.next(new Snapshot(NOW.minusSeconds(1), List.of(MOUNT), segments, holders.build(), live, Map.of(), List.of(),
        List.of(), true, 2));

    Judgement j = Judge.judge(laterWithoutHolders(new BitSet(), Map.of()), history, POLICY);

    assertThat(j.segments().get(0).reason())
        .isEqualTo("unheld; every process that held it has exited (100 python3 (alice, pod:1234), pid 101)");
  }

  @Test
  void segmentWithMoreHoldersThanTheHistoryKeepsWaitsOutGraceEvenWhenTheyAllExit() {
    Segment s = segment("nccl-Crowd1", 1, 9_637_892, Duration.ofSeconds(5));
    for (int pid = 100; pid < 100 + HolderHistory.MAX_HOLDERS + 1; pid++) {
      hold(s, pid, Access.FD, 5000 + pid);
    }
    HolderHistory history = HolderHistory.empty().next(snapshot(NOW.minusSeconds(1)));

    Judgement j = Judge.judge(laterWithoutHolders(new BitSet(), Map.of()), history, POLICY);

    assertThat(verdictOf(j, "nccl-Crowd1")).isEqualTo(Verdict.GRACE);
    assertThat(j.segments().get(0).lastHolders()).hasSize(HolderHistory.MAX_HOLDERS);
  }

  @Test
  void holderThatLetGoButLivesKeepsTheSegmentInGrace() {
    Segment s = segment("nccl-LetGo1", 1, 9_637_892, Duration.ofSeconds(5));
    hold(s, 100, Access.MAP, 5000);
    HolderHistory history = HolderHistory.empty().next(snapshot(NOW.minusSeconds(1)));
    Snapshot after = laterWithoutHolders(pids(100), Map.of());

    assertThat(verdictOf(Judge.judge(after, history, POLICY), "nccl-LetGo1")).isEqualTo(Verdict.GRACE);
  }

  @Test
  void pidReusedByALaterProcessCountsAsExited() {
    Segment s = segment("nccl-Reuse1", 1, 9_637_892, Duration.ofSeconds(5));
    hold(s, 100, Access.MAP, 5000);
    HolderHistory history = HolderHistory.empty().next(snapshot(NOW.minusSeconds(1)));
    Map<Integer, ProcessInfo> newcomer = Map.of(100, new ProcessInfo(100, "bash", 0, "root", null, 9999));

    Snapshot after = laterWithoutHolders(pids(100), newcomer);

    assertThat(verdictOf(Judge.judge(after, history, POLICY), "nccl-Reuse1")).isEqualTo(Verdict.LEAKED);
  }

  @Test
  void incompletePassBlocksEveryReapAndSaysWhy() {
    segment("nccl-Old001", 1, 9_637_892, Duration.ofMinutes(5));
    problems.add("could not read 3 processes (permission denied): pids 1, 2, 3");
    Judgement j = judge();
    assertThat(j.plan().isEmpty()).isTrue();
    assertThat(j.plan().blockers()).containsExactly("could not read 3 processes (permission denied): pids 1, 2, 3");
    assertThat(j.segments().get(0).reason()).contains("not confirmed");
  }

  @Test
  void foreignPidNamespaceBlocksReapingUnlessThePolicyAllowsIt() {
    segment("nccl-Old001", 1, 9_637_892, Duration.ofMinutes(5));
    hostPid = false;
    assertThat(judge().plan().blockers()).singleElement().asString().contains("not in the host's PID namespace");
    ReapPolicy sandbox = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), false);
    assertThat(Judge.judge(snapshot(NOW), HolderHistory.empty(), sandbox).plan().candidates()).hasSize(1);
  }

  @Test
  void unlinkedButMappedSegmentsAreHiddenBytesAttributedToTheirHolders() {
    FileKey gone = new FileKey(DEV, 77);
    holders.add(gone, new HolderRef(300, Access.MAP, "/dev/shm/nccl-AbCdEf (deleted)", true, 9_641_984));
    holders.add(gone, new HolderRef(301, Access.MAP, "/dev/shm/nccl-AbCdEf (deleted)", true, 9_641_984));
    holders.add(new FileKey(DEV, 78), new HolderRef(302, Access.FD, "/dev/shm/sub/file", false, 10));
    Judgement j = judge();
    MountReport r = j.mounts().get(0);
    assertThat(r.hiddenBytes()).isEqualTo(9_641_984);
    assertThat(r.hidden()).singleElement().satisfies(h -> {
      assertThat(h.pids()).containsExactly(300, 301);
      assertThat(h.path()).isEqualTo("/dev/shm/nccl-AbCdEf (deleted)");
    });
  }

  @Test
  void mountFiguresComeFromTheListingsCountsNotFromTheSegmentsKept() {
    segment("nccl-Kept01", 1, 4096, Duration.ofDays(1));
    Snapshot snap = new Snapshot(NOW, List.of(MOUNT), segments, holders.build(), live, infos, problems, List.of(), true, 0,
        List.of(new org.shmguard.model.MountContents(DEV, 1_000_000, 7L << 20, 3, 20_000, 4096, 1, 1)));

    Judgement j = Judge.judge(snap, HolderHistory.empty(), POLICY);

    assertThat(j.mounts()).singleElement().satisfies(r -> {
      assertThat(r.segments()).isEqualTo(1_000_000);
      assertThat(r.visibleBytes()).isEqualTo(7L << 20);
    });
    assertThat(j.segments()).hasSize(1);
  }
}
