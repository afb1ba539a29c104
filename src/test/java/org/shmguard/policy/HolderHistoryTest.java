package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

/**
 * The holders remembered across passes, with snapshots built by hand (the decide stage has no
 * kernel): every holder exited, a pid reused by a later process, a holder alive but let go, too
 * many holders to follow, a segment gone, and a detail a pass could not read.
 */
class HolderHistoryTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-26T20:00:00Z");
  private static final ShmMount MOUNT = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null, null);
  private static final Segment SEG = new Segment(DEV, "nccl-Hist01".getBytes(StandardCharsets.UTF_8), 11, 4096, 4096, 0100600,
      1000, 1, 0, 0);
  private static final ProcessInfo RANK0 = new ProcessInfo(100, "python3", 1000, "alice", null, 5_000);
  private static final ProcessInfo RANK1 = new ProcessInfo(101, "python3", 1000, "alice", null, 5_001);

  @Test
  void everyHolderThatExitedOrWhosePidALaterProcessTookHasExited() {
    HolderHistory h = HolderHistory.empty().next(held(RANK0, RANK1));
    assertThat(h.lastHolders(SEG.key())).containsExactly(RANK0, RANK1);

    assertThat(h.allHoldersExited(SEG.key(), unheld(Map.of()))).isTrue();
    ProcessInfo laterOn101 = new ProcessInfo(101, "bash", 0, "root", null, 9_999);
    assertThat(h.allHoldersExited(SEG.key(), unheld(Map.of(101, laterOn101)))).as("pid 101 reused").isTrue();
    assertThat(h.allHoldersExited(SEG.key(), unheld(Map.of(100, RANK0)))).as("rank 0 alive, let go").isFalse();
  }

  @Test
  void aSegmentNeverSeenHeldHasNoEvidenceAndOneGoneIsForgotten() {
    HolderHistory h = HolderHistory.empty().next(unheld(Map.of()));
    assertThat(h.allHoldersExited(SEG.key(), unheld(Map.of()))).isFalse();
    assertThat(h.size()).isZero();

    HolderHistory seen = HolderHistory.empty().next(held(RANK0));
    assertThat(seen.next(unheld(Map.of())).lastHolders(SEG.key())).as("kept while the segment is there").containsExactly(RANK0);
    assertThat(seen.next(withoutSegment()).size()).as("forgotten once it is gone").isZero();
  }

  @Test
  void moreHoldersThanItFollowsTurnTheFastPathOff() {
    ProcessInfo[] many = new ProcessInfo[HolderHistory.MAX_HOLDERS + 1];
    for (int i = 0; i < many.length; i++) {
      many[i] = new ProcessInfo(1_000 + i, "worker", 1000, "alice", null, i);
    }
    HolderHistory h = HolderHistory.empty().next(held(many));

    assertThat(h.lastHolders(SEG.key())).hasSize(HolderHistory.MAX_HOLDERS);
    assertThat(h.completeHolders(SEG.key())).isEmpty();
    assertThat(h.allHoldersExited(SEG.key(), unheld(Map.of()))).isFalse();
    assertThat(h.next(unheld(Map.of())).completeHolders(SEG.key())).as("still partial a pass later").isEmpty();
  }

  @Test
  void aHolderWhoseDetailsThisPassCouldNotReadKeepsWhatAnEarlierPassKnew() {
    HolderHistory h = HolderHistory.empty().next(held(RANK0));

    Snapshot unreadable = snapshot(HolderIndex.builder().add(SEG.key(), ref(RANK0.pid())).build(), pids(RANK0.pid()), Map.of(),
        List.of(SEG));
    assertThat(h.next(unreadable).lastHolders(SEG.key())).containsExactly(RANK0);
    assertThat(HolderHistory.empty().next(unreadable).lastHolders(SEG.key()))
        .as("a reader nobody knows the owner of proves nothing by exiting").isEmpty();
    Snapshot unreadableWriter = snapshot(HolderIndex.builder().add(SEG.key(),
        new HolderRef(RANK0.pid(), Access.MAP, "/dev/shm/nccl-Hist01", false, 4096, Use.WRITE)).build(), pids(RANK0.pid()),
        Map.of(), List.of(SEG));
    assertThat(HolderHistory.empty().next(unreadableWriter).lastHolders(SEG.key())).as("a writer, whoever it is")
        .containsExactly(new ProcessInfo(RANK0.pid(), "?", -1, null, null, -1));
  }

  @Test
  void aStrangersLookupOrReadOnlyHoldIsNotEvidenceAndLeavesTheJobsOwnHoldersInPlace() {
    ProcessInfo stranger = new ProcessInfo(75, "python3", 65534, "nobody", null, 7_500);
    HolderIndex lookup = HolderIndex.builder()
        .add(SEG.key(), new HolderRef(75, Access.FD, "/dev/shm/nccl-Hist01", false, 4096, Use.LOOKUP)).build();
    HolderIndex reader = HolderIndex.builder()
        .add(SEG.key(), new HolderRef(75, Access.MAP, "/dev/shm/nccl-Hist01", false, 4096, Use.READ)).build();

    HolderHistory onlyStranger = HolderHistory.empty().next(snapshot(lookup, pids(75), Map.of(75, stranger), List.of(SEG)));
    assertThat(onlyStranger.lastHolders(SEG.key())).as("O_PATH").isEmpty();
    assertThat(onlyStranger.allHoldersExited(SEG.key(), unheld(Map.of()))).as("its exit reaps nothing").isFalse();
    assertThat(HolderHistory.empty().next(snapshot(reader, pids(75), Map.of(75, stranger), List.of(SEG)))
        .lastHolders(SEG.key())).as("another uid's read-only mapping").isEmpty();

    HolderHistory jobThenStranger = HolderHistory.empty().next(held(RANK0))
        .next(snapshot(lookup, pids(75), Map.of(75, stranger), List.of(SEG)));
    assertThat(jobThenStranger.lastHolders(SEG.key())).as("the job's holder is still the evidence").containsExactly(RANK0);
  }

  @Test
  void aVolumesContainerIsRememberedOnceItEndedAndNamedInItsReapsEvents() {
    ShmMount inContainer = new ShmMount(DEV, "/proc/77/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE, "rw",
        "mnt:[4026532999]", List.of(77), "podman:57c282395ef3", null);
    ShmMount configured = new ShmMount(DEV, "/srv/pod-shm", "/srv/pod-shm", MountOrigin.CONFIGURED, "rw", null, List.of(),
        null, null);
    BitSet live = pids(77);
    HolderHistory h = HolderHistory.empty().next(new Snapshot(NOW, List.of(inContainer), List.of(SEG), HolderIndex.empty(),
        live, Map.of(), List.of(), List.of(), true, 1));
    Snapshot ended = new Snapshot(NOW.plusSeconds(5), List.of(configured), List.of(SEG), HolderIndex.empty(), new BitSet(),
        Map.of(), List.of(), List.of(), true, 0);

    assertThat(h.lastContainer(DEV)).isEqualTo("podman:57c282395ef3");
    assertThat(h.next(ended).lastContainer(DEV)).as("kept while the volume is watched").isEqualTo("podman:57c282395ef3");
    Assessment a = Judge.judge(ended, h, new ReapPolicy(java.time.Duration.ZERO,
        List.of(org.shmguard.text.Glob.of("nccl-*")), List.of(), false)).segments().get(0);
    assertThat(SegmentAlert.of(org.shmguard.alert.EventKind.SEGMENT_REAPED, "reaped", a, "why").field("SHM_CONTAINER"))
        .as("the reap after the container ended names it").isEqualTo("podman:57c282395ef3");
    assertThat(h.next(ended).next(new Snapshot(NOW, List.of(MOUNT), List.of(SEG), HolderIndex.empty(), new BitSet(),
        Map.of(), List.of(), List.of(), true, 0)).lastContainer(DEV)).as("not on the host's own /dev/shm").isNull();
  }

  private static Snapshot held(ProcessInfo... holders) {
    HolderIndex.Builder index = HolderIndex.builder();
    Map<Integer, ProcessInfo> infos = new HashMap<>();
    BitSet live = new BitSet();
    for (ProcessInfo p : holders) {
      index.add(SEG.key(), ref(p.pid()));
      infos.put(p.pid(), p);
      live.set(p.pid());
    }
    return snapshot(index.build(), live, infos, List.of(SEG));
  }

  private static Snapshot unheld(Map<Integer, ProcessInfo> running) {
    BitSet live = new BitSet();
    running.keySet().forEach(live::set);
    return snapshot(HolderIndex.empty(), live, running, List.of(SEG));
  }

  private static Snapshot withoutSegment() {
    return snapshot(HolderIndex.empty(), new BitSet(), Map.of(), List.of());
  }

  private static Snapshot snapshot(HolderIndex index, BitSet live, Map<Integer, ProcessInfo> infos, List<Segment> segments) {
    return new Snapshot(NOW, List.of(MOUNT), segments, index, live, infos, List.of(), List.of(), true, live.cardinality());
  }

  private static HolderRef ref(int pid) {
    return new HolderRef(pid, Access.MAP, "/dev/shm/nccl-Hist01", false, 4096);
  }

  private static BitSet pids(int... pids) {
    BitSet b = new BitSet();
    for (int p : pids) {
      b.set(p);
    }
    return b;
  }
}
