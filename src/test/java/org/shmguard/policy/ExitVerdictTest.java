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
import java.util.Set;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.model.Use;
import org.shmguard.text.Glob;

/** The exit path's verdict without a kernel: a held file whose every holder has gone, and what keeps it off that path. */
class ExitVerdictTest {
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
  private boolean hostPid = true;

  private Segment segment(String name, int nlink) {
    long t = NOW.minusSeconds(5).getEpochSecond() * 1_000_000_000L;
    Segment s = new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), segments.size() + 10, 4096, 4096, 0100600, 1000,
        nlink, t, t);
    segments.add(s);
    return s;
  }

  private void hold(Segment s, int pid) {
    hold(s, pid, 1000, Access.FD, Use.WRITE);
  }

  private void hold(Segment s, int pid, int uid, Access access, Use use) {
    holders.add(s.key(), new HolderRef(pid, access, "/dev/shm/" + s.displayName(), false, s.sizeBytes(), use));
    live.set(pid);
    infos.put(pid, new ProcessInfo(pid, "python3", uid, uid == 1000 ? "alice" : "nobody", null, 4242 + pid));
  }

  private Assessment onExit(Segment s, Set<Integer> gonePids) {
    return onExit(s, gonePids, NOW);
  }

  private Assessment onExit(Segment s, Set<Integer> gonePids, Instant at) {
    Snapshot snap = new Snapshot(NOW, List.of(MOUNT), segments, holders.build(), live, infos, List.of(), List.of(), hostPid,
        live.cardinality());
    Judgement j = Judge.judge(snap, HolderHistory.empty(), POLICY);
    Assessment held = j.segments().stream().filter(a -> a.segment().equals(s)).findFirst().orElseThrow();
    Predicate<ProcessInfo> gone = p -> gonePids.contains(p.pid());
    return ExitVerdict.leaked(held, j, gone, POLICY, at);
  }

  @Test
  void aFileWhoseEveryHolderHasGoneIsLeakedWithTheExitPathsEvidence() {
    Segment s = segment("nccl-A", 1);
    hold(s, 7);
    hold(s, 8);

    Assessment a = onExit(s, Set.of(7, 8));

    assertThat(a.verdict()).isEqualTo(Verdict.LEAKED);
    assertThat(a.holders()).isEmpty();
    assertThat(a.lastHolders()).extracting(ProcessInfo::pid).containsExactly(7, 8);
    assertThat(a.reason()).startsWith("unheld; every process that held it has exited (").contains(ExitVerdict.EVIDENCE);
  }

  @Test
  void aFileOneOfWhoseHoldersLivesIsNotDecidedHere() {
    Segment s = segment("nccl-B", 1);
    hold(s, 7);
    hold(s, 8);

    assertThat(onExit(s, Set.of(7))).isNull();
  }

  @Test
  void deniedUnmatchedAndHardLinkedFilesAreNotDecidedHere() {
    Segment denied = segment("cuda.shm.1", 1);
    Segment other = segment("torch_123", 1);
    Segment linked = segment("nccl-L", 2);
    hold(denied, 7);
    hold(other, 7);
    hold(linked, 7);

    assertThat(onExit(denied, Set.of(7))).isNull();
    assertThat(onExit(other, Set.of(7))).isNull();
    assertThat(onExit(linked, Set.of(7))).isNull();
  }

  @Test
  void nothingIsDecidedOutsideTheHostsPidNamespaceWhenThePolicyAsksForIt() {
    Segment s = segment("nccl-C", 1);
    hold(s, 7);
    hostPid = false;

    assertThat(onExit(s, Set.of(7))).isNull();
  }

  @Test
  void aStrangersLookupOrReadOnlyHoldProvesNothingByExiting() {
    Segment lookedUp = segment("nccl-P", 1);
    Segment read = segment("nccl-R", 1);
    Segment mapped = segment("nccl-M", 1);
    hold(lookedUp, 75, 65534, Access.FD, Use.LOOKUP);
    hold(read, 76, 65534, Access.FD, Use.READ);
    hold(mapped, 77, 65534, Access.MAP, Use.READ);

    assertThat(onExit(lookedUp, Set.of(75))).as("O_PATH of another uid").isNull();
    assertThat(onExit(read, Set.of(76))).as("read-only fd of another uid").isNull();
    assertThat(onExit(mapped, Set.of(77))).as("read-only mapping of another uid").isNull();
  }

  @Test
  void theOwnersOwnLookupProvesNothingEitherButItsReaderAndAStrangersWriterDo() {
    Segment lookedUp = segment("nccl-O", 1);
    Segment ownReader = segment("nccl-Q", 1);
    Segment strangersWriter = segment("nccl-W", 1);
    hold(lookedUp, 80, 1000, Access.FD, Use.LOOKUP);
    hold(ownReader, 81, 1000, Access.FD, Use.READ);
    hold(strangersWriter, 82, 65534, Access.MAP, Use.WRITE);

    assertThat(onExit(lookedUp, Set.of(80))).as("the owner's O_PATH").isNull();
    assertThat(onExit(ownReader, Set.of(81)).verdict()).as("the owner's reader").isEqualTo(Verdict.LEAKED);
    assertThat(onExit(strangersWriter, Set.of(82)).verdict()).as("a writer could destroy it anyway")
        .isEqualTo(Verdict.LEAKED);
  }

  @Test
  void aStrangersLookupBesideTheJobsHolderIsLeftOutOfTheEvidence() {
    Segment s = segment("nccl-S", 1);
    hold(s, 7);
    hold(s, 75, 65534, Access.FD, Use.LOOKUP);

    Assessment a = onExit(s, Set.of(7, 75));

    assertThat(a.verdict()).isEqualTo(Verdict.LEAKED);
    assertThat(a.lastHolders()).extracting(ProcessInfo::pid).containsExactly(7);
  }

  @Test
  void theAgeIsTheFilesAgeAtTheReapNotAtThePassThatSawItHeld() {
    Segment s = segment("nccl-T", 1); // changed 5 s before NOW

    hold(s, 7);

    assertThat(onExit(s, Set.of(7), NOW.plusSeconds(16)).age()).isEqualTo(Duration.ofSeconds(21));
  }

  private ExitVerdict.Decision decide(int[] exited, Set<Integer> gonePids) {
    Snapshot snap = new Snapshot(NOW, List.of(MOUNT), segments, holders.build(), live, infos, List.of(), List.of(), hostPid,
        live.cardinality());
    Judgement j = Judge.judge(snap, HolderHistory.empty(), POLICY);
    return ExitVerdict.decide(j, exited, p -> gonePids.contains(p.pid()), POLICY, NOW);
  }

  @Test
  void anExitPassReapsOnlyFilesTheExitedHeldAndEveryHolderOfWhichHasGone() {
    Segment mine = segment("nccl-X1", 1);
    Segment shared = segment("nccl-X2", 1);
    Segment others = segment("nccl-X3", 1);
    hold(mine, 7);
    hold(shared, 7);
    hold(shared, 8);
    hold(others, 9);

    ExitVerdict.Decision d = decide(new int[] {7}, Set.of(7, 9));

    assertThat(d.leaked()).extracting(a -> a.segment().nameText()).containsExactly("nccl-X1");
    assertThat(d.undecided()).isFalse();
  }

  @Test
  void aFileWhoseHoldersAllWentButThatThisPathDoesNotDecideIsLeftToTheFullPassAtOnce() {
    Segment linked = segment("nccl-L2", 2);
    hold(linked, 7);

    ExitVerdict.Decision d = decide(new int[] {7}, Set.of(7));

    assertThat(d.leaked()).isEmpty();
    assertThat(d.undecided()).isTrue();
  }

  @Test
  void aFileOnlyAStrangersLookupHeldIsNeitherReapedNorUndecided() {
    Segment lookedUp = segment("nccl-P2", 1);
    hold(lookedUp, 75, 65534, Access.FD, Use.LOOKUP);

    ExitVerdict.Decision d = decide(new int[] {75}, Set.of(75));

    assertThat(d.leaked()).isEmpty();
    assertThat(d.undecided()).isFalse();
  }
}
