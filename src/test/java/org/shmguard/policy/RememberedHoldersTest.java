package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
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
import org.shmguard.text.Glob;

/**
 * What a restart carries over, without a kernel: the holders remembered for a file count only
 * where the host still shows that very file (mount id, device, inode, name, last change), and a
 * holder is the same process only with the same pid and start time.
 */
class RememberedHoldersTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-26T10:00:00Z");
  private static final long MOUNT_ID = 812;
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofHours(1), List.of(Glob.of("nccl-*")), List.of(), true);
  private static final long CHANGED = NOW.minusSeconds(30).getEpochSecond() * 1_000_000_000L;
  private static final ProcessInfo RANK = new ProcessInfo(4242, "python3", 1000, "alice", "pod:train-0", 987_654);

  private static ShmMount mount(long id) {
    return new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
        new ShmMount.Usage(64 << 20, 10 << 20, 54 << 20, 1000, 990), id, "/proc/1/mountinfo", null, 0L);
  }

  private static Segment segment(String name, long ino, long changed) {
    return new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), ino, 4100, 8192, 0100600, 1000, 1, changed, changed);
  }

  private static Snapshot snapshot(ShmMount m, List<Segment> segments, HolderIndex holders, Map<Integer, ProcessInfo> alive) {
    BitSet live = new BitSet();
    alive.keySet().forEach(live::set);
    return new Snapshot(NOW, List.of(m), segments, holders, live, alive, List.of(), List.of(), true, alive.size());
  }

  /** What daemon 1 keeps after seeing RANK hold nccl-Known1. */
  private static RememberedHolders keptBefore() {
    Segment s = segment("nccl-Known1", 77, CHANGED);
    HolderIndex.Builder h = HolderIndex.builder();
    h.add(s.key(), new HolderRef(RANK.pid(), Access.MAP, "/dev/shm/nccl-Known1", false, 4100));
    Snapshot seen = snapshot(mount(MOUNT_ID), List.of(s), h.build(), Map.of(RANK.pid(), RANK));
    return RememberedHolders.from(seen, HolderHistory.empty().next(seen), RememberedHolders.MAX_HOLDERS);
  }

  private static Verdict judgedAfterRestart(ShmMount m, Segment s, Map<Integer, ProcessInfo> alive) {
    Snapshot after = snapshot(m, List.of(s), HolderIndex.empty(), alive);
    HolderHistory h = keptBefore().admit(after, HolderHistory.empty());
    return Judge.judge(after, h, POLICY).segments().get(0).verdict();
  }

  @Test
  void aFileWhoseHoldersAllExitedIsLeakedAtOnceAfterARestart() {
    assertThat(keptBefore().entries()).hasSize(1);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Known1", 77, CHANGED), Map.of())).isEqualTo(Verdict.LEAKED);
  }

  @Test
  void aHolderIsTheSameProcessOnlyWithTheSamePidAndStartTime() {
    ProcessInfo samePidLater = new ProcessInfo(RANK.pid(), "bash", 1001, "bob", null, RANK.startTicks() + 5000);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Known1", 77, CHANGED), Map.of(RANK.pid(), samePidLater)))
        .as("the pid now names a later process: the holder exited").isEqualTo(Verdict.LEAKED);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Known1", 77, CHANGED), Map.of(RANK.pid(), RANK)))
        .as("the same process, alive and let go: not every holder exited").isEqualTo(Verdict.GRACE);
  }

  @Test
  void anythingButTheVeryFileOnTheVeryMountWaitsOutItsGrace() {
    assertThat(judgedAfterRestart(mount(MOUNT_ID + 1), segment("nccl-Known1", 77, CHANGED), Map.of()))
        .as("another mount with the same device number (the old one unmounted)").isEqualTo(Verdict.GRACE);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Other1", 77, CHANGED), Map.of()))
        .as("another name on the same inode number").isEqualTo(Verdict.GRACE);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Known1", 77, CHANGED + 1), Map.of()))
        .as("changed since daemon 1 saw it").isEqualTo(Verdict.GRACE);
    assertThat(judgedAfterRestart(mount(MOUNT_ID), segment("nccl-Known1", 78, CHANGED), Map.of()))
        .as("another inode").isEqualTo(Verdict.GRACE);
  }

  @Test
  void aHolderWithoutItsStartTimeOrAnUnverifiedMountIsNeverRemembered() {
    assertThatThrownBy(() -> new RememberedHolders.Entry(DEV, MOUNT_ID, 77, "nccl-Known1".getBytes(StandardCharsets.UTF_8),
        CHANGED, List.of(new ProcessInfo(4242, "python3", 1000, "alice", null, -1))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("pid and start time");
    Segment s = segment("nccl-Known1", 77, CHANGED);
    HolderIndex.Builder h = HolderIndex.builder();
    h.add(s.key(), new HolderRef(RANK.pid(), Access.MAP, "/dev/shm/nccl-Known1", false, 4100));
    Snapshot unverified = snapshot(mount(0), List.of(s), h.build(), Map.of(RANK.pid(), RANK));
    assertThat(RememberedHolders.from(unverified, HolderHistory.empty().next(unverified), RememberedHolders.MAX_HOLDERS)
        .entries()).isEmpty();
  }
}
