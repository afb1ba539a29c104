package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/**
 * Issue 30, item 6: empty {@code nccl-*} files on a tmpfs with room are their owner's matter, not
 * the node's: a notice with SHM_SCOPE=owner and the file's SHM_OWNER_UID, at most one per owner
 * every five minutes, and no remount; on a tmpfs out of room for an NCCL segment, the node's error
 * as before.
 */
class CapacityAlertsTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant START = Instant.parse("2026-11-21T10:00:00Z");
  private static final long GIB = 1L << 30;
  private static final ReapPolicy REAP = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);
  private static final RemountPolicy REMOUNT_ON = new RemountPolicy(true, SizeSpec.ofBytes(64 * GIB), SizeSpec.ofPercent(50),
      Duration.ofMinutes(10));
  private static final CapacityPolicy CAPACITY = new CapacityPolicy(80, 95, 5);
  private long ino = 100;

  private Segment empty(int uid, Instant at) {
    long t = at.minusSeconds(1).getEpochSecond() * 1_000_000_000L;
    long n = ino++;
    return new Segment(DEV, ("nccl-Churn" + n).getBytes(StandardCharsets.UTF_8), n, 0, 0, 0100600, uid, 1, t, t);
  }

  private static List<Alert> raised(Plan p) {
    List<Alert> out = new ArrayList<>();
    for (Action a : p.actions()) {
      if (a instanceof Action.Raise r) {
        out.add(r.alert());
      }
    }
    return out;
  }

  private static Plan pass(Planner planner, Instant at, long freeBytes, List<Segment> files) {
    ShmMount hostShm = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
        new ShmMount.Usage(32 * GIB, 32 * GIB - freeBytes, freeBytes, 1_000_000, 990_000));
    Snapshot snap = new Snapshot(at, List.of(hostShm), files, HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 0);
    return planner.next(Judge.judge(snap, HolderHistory.empty(), REAP), false);
  }

  @Test
  void aUsersChurnOfEmptyNcclFilesOnATmpfsWithRoomIsTheirsAtMostOneNoticeEveryFiveMinutes() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    List<Alert> all = new ArrayList<>();
    List<Action> remounts = new ArrayList<>();
    Instant at = START;
    for (int pass = 0; pass < 60; pass++, at = at.plusSeconds(10)) { // ten minutes, three files a pass
      Plan p = pass(planner, at, 30 * GIB, List.of(empty(65534, at), empty(65534, at), empty(65534, at)));
      all.addAll(raised(p));
      p.actions().stream().filter(Action.Remount.class::isInstance).forEach(remounts::add);
    }
    assertThat(remounts).as("a user's empty files never grow the node's tmpfs").isEmpty();
    assertThat(all).extracting(Alert::kind).containsOnly(EventKind.ALLOCATION_FAILED);
    assertThat(all).as("180 failed creations in ten minutes: one event every five minutes").hasSize(2);
    assertThat(all).allSatisfy(a -> {
      assertThat(a.priority()).as("a notice, not the node's error").isEqualTo(5);
      assertThat(a.field("SHM_SCOPE")).isEqualTo("owner");
      assertThat(a.field("SHM_OWNER_UID")).isEqualTo("65534");
      assertThat(a.message()).contains("uid 65534's own file, not the node's");
    });
    assertThat(all.get(0).field("SHM_UNREPORTED")).isEqualTo("0");
    assertThat(all.get(1).field("SHM_UNREPORTED")).isEqualTo("89"); // 30 passes of 3, less the one said
    assertThat(all.get(1).message()).contains("89 more of uid 65534's since the last such event");
  }

  @Test
  void eachOwnerHasItsOwnRate() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    List<Alert> alerts = raised(pass(planner, START, 30 * GIB,
        List.of(empty(65534, START), empty(65534, START), empty(1000, START))));
    assertThat(alerts).extracting(a -> a.field("SHM_OWNER_UID")).containsExactlyInAnyOrder("65534", "1000");
  }

  @Test
  void onATmpfsOutOfRoomForAnNcclSegmentItIsTheNodesErrorAndGrowsTheMount() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    Plan p = pass(planner, START, 8L << 20, List.of(empty(65534, START), empty(1000, START)));
    List<Alert> alerts = raised(p).stream().filter(a -> a.kind() == EventKind.ALLOCATION_FAILED).toList();
    assertThat(alerts).hasSize(2).allSatisfy(a -> {
      assertThat(a.priority()).isEqualTo(3);
      assertThat(a.field("SHM_SCOPE")).isNull();
    });
    assertThat(p.actions()).filteredOn(Action.Remount.class::isInstance).hasSize(1);
  }

  /** A crashed job's segments may be freed (an exit reaps them at once) before the pass that sees its empty file. */
  @Test
  void aMountSeenOutOfRoomWithinTheLastMinuteStillCountsAsOutOfRoom() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    pass(planner, START, 8L << 20, List.of());
    Instant soon = START.plusSeconds(30);
    List<Alert> alerts = raised(pass(planner, soon, 30 * GIB, List.of(empty(1000, soon)))).stream()
        .filter(a -> a.kind() == EventKind.ALLOCATION_FAILED).toList();
    assertThat(alerts).singleElement().satisfies(a -> {
      assertThat(a.priority()).isEqualTo(3);
      assertThat(a.field("SHM_SCOPE")).isNull();
    });
    Instant later = START.plusSeconds(61);
    assertThat(raised(pass(planner, later, 30 * GIB, List.of(empty(1000, later)))))
        .filteredOn(a -> a.kind() == EventKind.ALLOCATION_FAILED)
        .singleElement().satisfies(a -> assertThat(a.field("SHM_SCOPE")).isEqualTo("owner"));
  }
}
