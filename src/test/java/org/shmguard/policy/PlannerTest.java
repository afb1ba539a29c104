package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/** The daemon's plan after a pass, without a kernel: judgements built by hand, time passed in. */
class PlannerTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-21T10:00:00Z");
  private static final long SIZE = 64L << 20;
  private static final ReapPolicy REAP = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);
  private static final RemountPolicy REMOUNT_ON = new RemountPolicy(true, SizeSpec.ofBytes(1L << 30), SizeSpec.ofPercent(50),
      Duration.ofMinutes(10));
  private static final RemountPolicy REMOUNT_OFF = new RemountPolicy(false, SizeSpec.ofBytes(1L << 30), SizeSpec.ofPercent(50),
      Duration.ofMinutes(10));
  private static final CapacityPolicy CAPACITY = new CapacityPolicy(80, 95, 5);

  private static Judgement judgement(double usedPercent, List<Segment> segments) {
    long used = (long) (SIZE * usedPercent / 100);
    ShmMount mount = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
        new ShmMount.Usage(SIZE, used, SIZE - used, 1000, 990));
    Snapshot snap = new Snapshot(NOW, List.of(mount), segments, HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 0);
    return Judge.judge(snap, HolderHistory.empty(), REAP);
  }

  private static Judgement judgement(double usedPercent) {
    return judgement(usedPercent, List.of());
  }

  private static Segment segment(String name, Duration age) {
    long t = NOW.minus(age).getEpochSecond() * 1_000_000_000L;
    return new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), age.toSeconds() + 10, 4096, 4096, 0100600, 1000, 1, t, t);
  }

  private static List<Action.Remount> remounts(Plan p) {
    return p.actions().stream().filter(Action.Remount.class::isInstance).map(Action.Remount.class::cast).toList();
  }

  private static List<EventKind> raised(Plan p) {
    return raised(p.actions());
  }

  private static List<EventKind> raised(List<Action> actions) {
    return actions.stream().filter(Action.Raise.class::isInstance).map(a -> ((Action.Raise) a).alert().kind()).toList();
  }

  private static List<Action.Reap> reaps(Plan p) {
    return p.actions().stream().filter(Action.Reap.class::isInstance).map(Action.Reap.class::cast).toList();
  }

  /** What an act stage reports for one candidate, as remedy's ReapOutcome would. */
  private record Outcome(Assessment candidate, String detail, boolean reaped, boolean wouldReap, boolean failed,
      boolean leftLeaked) implements ReapResult {
    static Outcome reaped(Assessment a) {
      return new Outcome(a, "nothing holds it", true, false, false, false);
    }

    static Outcome wouldReap(Assessment a) {
      return new Outcome(a, "nothing holds it", false, true, false, false);
    }
  }

  @Test
  void aMountThatBecomesCriticalIsRemountedOnceUntilItLeavesCriticalPastTheHysteresis() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);

    Plan first = planner.next(judgement(96), false);
    assertThat(raised(first)).containsExactly(EventKind.CAPACITY_CRITICAL);
    assertThat(remounts(first)).singleElement().satisfies(r -> {
      assertThat(r.mount().dev()).isEqualTo(DEV);
      assertThat(r.trigger()).isEqualTo(Planner.CRITICAL_TRIGGER);
    });

    assertThat(remounts(planner.next(judgement(97), false))).isEmpty(); // still critical
    Plan hovering = planner.next(judgement(91), false); // within the hysteresis: still critical
    assertThat(raised(hovering)).isEmpty();
    assertThat(remounts(hovering)).isEmpty();

    assertThat(raised(planner.next(judgement(89), false))).containsExactly(EventKind.CAPACITY_WARNING);
    assertThat(remounts(planner.next(judgement(96), false))).hasSize(1); // entered critical again
  }

  @Test
  void remountingOffRaisesTheAlertButPlansNoRemount() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Plan p = planner.next(judgement(99), false);
    assertThat(raised(p)).containsExactly(EventKind.CAPACITY_CRITICAL);
    assertThat(remounts(p)).isEmpty();
  }

  /** A 0-byte nccl-* file nobody holds: NCCL could not extend a new segment there (Verdict.FAILED_CREATION). */
  private static Segment failedCreation(String name) {
    long t = NOW.minusSeconds(1).getEpochSecond() * 1_000_000_000L;
    return new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), 77, 0, 0, 0100600, 1000, 1, t, t);
  }

  @Test
  void aFailedNcclAllocationGrowsItsMountOnceWhileRemountingIsOn() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);

    Plan p = planner.next(judgement(86, List.of(failedCreation("nccl-Zero01"), failedCreation("nccl-Zero02"))), false);

    assertThat(raised(p)).containsExactly(EventKind.CAPACITY_WARNING, EventKind.ALLOCATION_FAILED, EventKind.ALLOCATION_FAILED);
    assertThat(remounts(p)).singleElement().satisfies(r -> {
      assertThat(r.mount().dev()).isEqualTo(DEV);
      assertThat(r.trigger()).isEqualTo(Planner.FAILED_ALLOCATION_TRIGGER);
    });
    assertThat(p.actions()).filteredOn(Action.Raise.class::isInstance)
        .allSatisfy(a -> assertThat(((Action.Raise) a).alert().field("SHM_REMOUNT")).isNull());
    assertThat(remounts(planner.next(judgement(86, List.of(failedCreation("nccl-Zero01"), failedCreation("nccl-Zero02"))),
        false))).as("the same failures, already reported").isEmpty();
  }

  @Test
  void aFailedAllocationInAMountShmguardOnlyReportsPlansNoRemount() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    ShmMount users = new ShmMount(DEV, "/proc/4242/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE, "rw", null, List.of(4242),
        null, new ShmMount.Usage(SIZE, SIZE / 2, SIZE / 2, 1000, 990), 0, null, "an ordinary user's namespace owns it", 65534L);
    Snapshot snap = new Snapshot(NOW, List.of(users), List.of(failedCreation("nccl-Zero01")), HolderIndex.empty(), new BitSet(),
        Map.of(), List.of(), List.of(), true, 0);

    Plan p = planner.next(Judge.judge(snap, HolderHistory.empty(), REAP), false);

    assertThat(raised(p)).containsExactly(EventKind.ALLOCATION_FAILED);
    assertThat(remounts(p)).isEmpty();
  }

  @Test
  void aMountThatBecomesCriticalWithAFailedAllocationIsGrownOnce() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);
    Plan p = planner.next(judgement(99, List.of(failedCreation("nccl-Zero01"))), false);
    assertThat(remounts(p)).singleElement().satisfies(r -> assertThat(r.trigger()).isEqualTo(Planner.CRITICAL_TRIGGER));
  }

  @Test
  void remountingOffPlansNoRemountAndTheEventsThatWouldHaveGrownTheMountSayWhy() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);

    Plan p = planner.next(judgement(99, List.of(failedCreation("nccl-Zero01"))), false);

    assertThat(remounts(p)).isEmpty();
    List<org.shmguard.alert.Alert> alerts = p.actions().stream().filter(Action.Raise.class::isInstance)
        .map(a -> ((Action.Raise) a).alert()).toList();
    assertThat(alerts).extracting(org.shmguard.alert.Alert::kind)
        .containsExactly(EventKind.CAPACITY_CRITICAL, EventKind.ALLOCATION_FAILED);
    assertThat(alerts).allSatisfy(a -> {
      assertThat(a.message()).endsWith("; not grown: remounting is off (remount.enabled: false)");
      assertThat(a.field("SHM_REMOUNT")).isEqualTo(RemountPolicy.OFF);
    });
  }

  @Test
  void everyPlanPublishesAdviceFromItsJudgement() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Judgement j = judgement(10);
    assertThat(planner.next(j, false).actions()).containsExactly(new Action.Advise(j));
  }

  @Test
  void thePlanLooksAgainWhenTheSoonestGraceEnds() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Plan p = planner.next(judgement(10, List.of(segment("nccl-young", Duration.ofSeconds(30)),
        segment("nccl-older", Duration.ofSeconds(100)), segment("nccl-old", Duration.ofMinutes(5)))), false);
    assertThat(p.lookAgainIn()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void withNothingInItsGraceThePlanSetsNoTimeToLookAgain() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    assertThat(planner.next(judgement(10, List.of(segment("nccl-old", Duration.ofMinutes(5)))), false).lookAgainIn())
        .isNull();
  }

  @Test
  void graceLeftIsWhatRemainsOfTheSegmentsGraceAndNullOutsideIt() {
    Judgement j = judgement(10, List.of(segment("nccl-young", Duration.ofSeconds(30)),
        segment("nccl-old", Duration.ofMinutes(5))));
    assertThat(j.segments()).extracting(REAP::graceLeft).containsExactly(Duration.ofSeconds(90), null);
  }

  @Test
  void aLeakedSegmentIsReapedByThePlansFirstActionAndOnlyItsOutcomeSaysReaped() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Judgement j = judgement(10, List.of(segment("nccl-old", Duration.ofMinutes(5)),
        segment("nccl-young", Duration.ofSeconds(30))));

    Plan p = planner.next(j, false);

    assertThat(p.actions().get(0)).isInstanceOf(Action.Reap.class);
    assertThat(reaps(p)).singleElement().satisfies(r -> {
      assertThat(r.dryRun()).isFalse();
      assertThat(r.candidates()).extracting(a -> a.segment().displayName()).containsExactly("nccl-old");
    });
    // The plan is data: until the act stage reports an outcome, nothing is said to be reaped.
    assertThat(raised(p)).doesNotContain(EventKind.SEGMENT_REAPED);
    Assessment old = reaps(p).get(0).candidates().get(0);
    assertThat(raised(planner.report(j, List.of(Outcome.reaped(old)), Set.of())))
        .containsExactly(EventKind.MOUNT_ADDED, EventKind.SEGMENT_REAPED);
  }

  @Test
  void aDryRunPlansTheSameReapAndItsWouldReapOutcomesAreReportedOncePerLeak() {
    Judgement j = judgement(10, List.of(segment("nccl-old", Duration.ofMinutes(5))));
    Action.Reap real = reaps(new Planner(REAP, REMOUNT_OFF, CAPACITY, 3).next(j, false)).get(0);
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);

    Action.Reap dry = reaps(planner.next(j, true)).get(0);

    assertThat(dry.dryRun()).isTrue();
    assertThat(dry.candidates()).isEqualTo(real.candidates());
    assertThat(Planner.reaping(j, true)).containsExactly(dry);
    List<ReapResult> would = List.of(Outcome.wouldReap(dry.candidates().get(0)));
    assertThat(raised(planner.report(j, would, Set.of()))).containsExactly(EventKind.MOUNT_ADDED,
        EventKind.SEGMENT_LEAKED);
    assertThat(raised(planner.report(j, would, Set.of()))).isEmpty(); // the same leak, the next pass
  }

  @Test
  void aBlockedPassPlansNoReap() {
    Snapshot incomplete = new Snapshot(NOW, judgement(10).snapshot().mounts(),
        List.of(segment("nccl-old", Duration.ofMinutes(5))), HolderIndex.empty(), new BitSet(), Map.of(),
        List.of("cannot read /proc/42/fd: Permission denied"), List.of(), true, 0);
    Judgement j = Judge.judge(incomplete, HolderHistory.empty(), REAP);
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);

    assertThat(reaps(planner.next(j, false))).isEmpty();
    assertThat(raised(planner.report(j, List.of(), Set.of()))).containsExactly(EventKind.MOUNT_ADDED,
        EventKind.SEGMENT_LEAKED, EventKind.SCAN_INCOMPLETE);
  }

  @Test
  void aMountThatGoesIsReportedRemovedAndAStalledOneSaysItIsWatchedAgainOnceItAnswers() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Judgement with = judgement(10);
    Judgement without = Judge.judge(new Snapshot(NOW, List.of(), List.of(), HolderIndex.empty(), new BitSet(), Map.of(),
        List.of(), List.of(), true, 0), HolderHistory.empty(), REAP);

    assertThat(raised(planner.report(with, List.of(), Set.of()))).containsExactly(EventKind.MOUNT_ADDED);
    assertThat(planner.report(with, List.of(), Set.of())).isEmpty();
    List<Action> gone = planner.report(without, List.of(), Set.of("/dev/shm"));
    assertThat(gone).singleElement().satisfies(a -> {
      var alert = ((Action.Raise) a).alert();
      assertThat(alert.kind()).isEqualTo(EventKind.MOUNT_REMOVED);
      assertThat(alert.message()).contains("not answering");
    });
    assertThat(raised(planner.report(with, List.of(), Set.of()))).containsExactly(EventKind.MOUNT_ADDED);
  }
}
