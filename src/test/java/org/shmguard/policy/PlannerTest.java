package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

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
    return p.actions().stream().filter(Action.Raise.class::isInstance).map(a -> ((Action.Raise) a).alert().kind()).toList();
  }

  @Test
  void aMountThatBecomesCriticalIsRemountedOnceUntilItLeavesCriticalPastTheHysteresis() {
    Planner planner = new Planner(REAP, REMOUNT_ON, CAPACITY, 3);

    Plan first = planner.next(judgement(96));
    assertThat(raised(first)).containsExactly(EventKind.CAPACITY_CRITICAL);
    assertThat(remounts(first)).singleElement().satisfies(r -> {
      assertThat(r.mount().dev()).isEqualTo(DEV);
      assertThat(r.trigger()).isEqualTo(Planner.CRITICAL_TRIGGER);
    });

    assertThat(remounts(planner.next(judgement(97)))).isEmpty(); // still critical
    Plan hovering = planner.next(judgement(91)); // within the hysteresis: still critical
    assertThat(raised(hovering)).isEmpty();
    assertThat(remounts(hovering)).isEmpty();

    assertThat(raised(planner.next(judgement(89)))).containsExactly(EventKind.CAPACITY_WARNING);
    assertThat(remounts(planner.next(judgement(96)))).hasSize(1); // entered critical again
  }

  @Test
  void remountingOffRaisesTheAlertButPlansNoRemount() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Plan p = planner.next(judgement(99));
    assertThat(raised(p)).containsExactly(EventKind.CAPACITY_CRITICAL);
    assertThat(remounts(p)).isEmpty();
  }

  @Test
  void everyPlanPublishesAdviceFromItsJudgement() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Judgement j = judgement(10);
    assertThat(planner.next(j).actions()).containsExactly(new Action.Advise(j));
  }

  @Test
  void thePlanLooksAgainWhenTheSoonestGraceEnds() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    Plan p = planner.next(judgement(10, List.of(segment("nccl-young", Duration.ofSeconds(30)),
        segment("nccl-older", Duration.ofSeconds(100)), segment("nccl-old", Duration.ofMinutes(5)))));
    assertThat(p.lookAgainIn()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void withNothingInItsGraceThePlanSetsNoTimeToLookAgain() {
    Planner planner = new Planner(REAP, REMOUNT_OFF, CAPACITY, 3);
    assertThat(planner.next(judgement(10, List.of(segment("nccl-old", Duration.ofMinutes(5))))).lookAgainIn()).isNull();
  }

  @Test
  void graceLeftIsWhatRemainsOfTheSegmentsGraceAndNullOutsideIt() {
    Judgement j = judgement(10, List.of(segment("nccl-young", Duration.ofSeconds(30)),
        segment("nccl-old", Duration.ofMinutes(5))));
    assertThat(j.segments()).extracting(REAP::graceLeft).containsExactly(Duration.ofSeconds(90), null);
  }
}
