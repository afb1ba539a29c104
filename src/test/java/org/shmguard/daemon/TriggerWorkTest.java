package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.nativ.FsUsage;
import org.shmguard.policy.CapacityPolicy;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.Planner;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.RemountPolicy;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.text.Glob;
import org.shmguard.text.SizeSpec;

/**
 * The clock triggers between passes, in a plain JVM: a real pass thread and a real
 * {@link PassSchedule}, the statvfs and the rediscovery made up, judgements built by hand.
 */
class TriggerWorkTest {
  private static final long MS = 1_000_000L;
  private static final long SETTLE = 200 * MS;
  private static final long T0 = 5_000_000_000L;
  private static final Dev DEV = Dev.of(0, 25);
  private static final Dev OTHER = Dev.of(0, 26);
  private static final long SIZE = 64L << 20;
  private static final FsUsage AS_SEEN = new FsUsage(SIZE, SIZE - (1L << 20), SIZE - (1L << 20), 1000, 990, false);
  private static final ReapPolicy REAP = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);

  private final PassSchedule schedule = new PassSchedule(SETTLE);
  private final PassThread passThread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(),
      ServiceNotifier.none());
  private final List<PassReport> told = new CopyOnWriteArrayList<>();
  private final AtomicReference<DaemonStatus> status = new AtomicReference<>(DaemonStatus.START);
  private final AtomicBoolean stopping = new AtomicBoolean();
  /** What the statvfs answers, and on which thread it was asked. */
  private volatile FsUsage statvfs = AS_SEEN;
  private final List<String> askedOn = new CopyOnWriteArrayList<>();
  private final Heartbeat heartbeat = new Heartbeat(path -> {
    askedOn.add(Thread.currentThread().getName());
    return statvfs;
  });

  @AfterEach
  void closeThePassThread() {
    passThread.close();
  }

  private TriggerWork triggers(Rediscovery rediscovery) {
    Planner planner = new Planner(REAP, new RemountPolicy(false, SizeSpec.ofBytes(1L << 30), SizeSpec.ofPercent(50),
        Duration.ofMinutes(10)), new CapacityPolicy(80, 95, 5), 3);
    return new TriggerWork(schedule, heartbeat, rediscovery, planner, told::add, status::get, passThread, stopping::get,
        () -> { });
  }

  private static Rediscovery finding(Set<Dev> mounts, boolean containerEnded) {
    return new Rediscovery() {
      @Override
      public Set<Dev> mounts() {
        return mounts;
      }

      @Override
      public boolean containerEnded() {
        return containerEnded;
      }
    };
  }

  /** A full pass that saw one mount, {@code DEV}, at 1 MiB of 64 MiB used. */
  private Judgement passed(long reaped) {
    ShmMount mount = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
        new ShmMount.Usage(SIZE, 1L << 20, SIZE - (1L << 20), 1000, 990));
    Snapshot snap = new Snapshot(Instant.EPOCH, List.of(mount), List.of(), HolderIndex.empty(), new BitSet(), Map.of(),
        List.of(), List.of(), true, 0);
    Judgement j = Judge.judge(snap, HolderHistory.empty(), REAP);
    PassReport report = new PassReport(j, new Plan(List.of(), null), List.of(), List.of(), List.of(), false,
        Duration.ofMillis(2));
    status.set(DaemonStatus.START.afterPass(report, 0, 1, 0, -1).plusReaped(reaped));
    schedule.passStarts();
    schedule.passEnded(T0, 2 * MS, false, null);
    return j;
  }

  @Test
  void theSweepMakesAPassDueAtOnce() {
    passed(0);

    triggers(finding(Set.of(), false)).carryOut(WorkRequest.Trigger.SWEEP, T0);

    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void aHeartbeatThatFindsEveryMountAsTheLastPassSawItBringsNoPass() {
    passed(0);
    TriggerWork triggers = triggers(finding(Set.of(), false));

    triggers.carryOut(WorkRequest.Trigger.HEARTBEAT, T0);

    assertThat(schedule.waitNanos(T0)).isEqualTo(Long.MAX_VALUE);
    assertThat(triggers.heartbeats()).isEqualTo(1);
    assertThat(askedOn).containsExactly("shmguard-pass");
  }

  @Test
  void aHeartbeatThatFindsAMountChangedBringsAPassOnceItSettles() {
    passed(0);
    statvfs = new FsUsage(2 * SIZE, 2 * SIZE - (1L << 20), 2 * SIZE - (1L << 20), 1000, 990, false); // remounted

    triggers(finding(Set.of(), false)).carryOut(WorkRequest.Trigger.HEARTBEAT, T0);

    assertThat(schedule.isDue(T0 + SETTLE - 1)).as("as an event: settled first").isFalse();
    assertThat(schedule.isDue(T0 + SETTLE)).isTrue();
  }

  @Test
  void beforeTheFirstPassAHeartbeatMeasuresNothingAndBringsNoPass() {
    TriggerWork triggers = triggers(finding(Set.of(), false));

    triggers.carryOut(WorkRequest.Trigger.HEARTBEAT, T0);

    assertThat(triggers.heartbeats()).isEqualTo(1);
    assertThat(askedOn).isEmpty();
    assertThat(schedule.isDue(T0 + SETTLE)).isFalse();
  }

  @Test
  void aStopWhileTheHeartbeatRunsBringsNoPass() throws Exception {
    passed(0);
    statvfs = null; // cannot be measured: a change, were it told
    CountDownLatch release = new CountDownLatch(1);
    TriggerWork triggers = new TriggerWork(schedule, new Heartbeat(path -> {
      awaitQuietly(release);
      return statvfs;
    }), finding(Set.of(), false), null, told::add, status::get, passThread, stopping::get, () -> { });
    stopping.set(true);
    try {
      triggers.carryOut(WorkRequest.Trigger.HEARTBEAT, T0);
    } finally {
      release.countDown();
    }

    assertThat(schedule.isDue(T0 + SETTLE)).isFalse();
  }

  @Test
  void aRediscoveryThatFindsTheMountsTheLastPassSawBringsNoPass() {
    TriggerWork triggers = triggers(finding(Set.of(DEV), false));
    triggers.passSaw(passed(0));

    triggers.carryOut(WorkRequest.Trigger.REDISCOVER, T0);

    assertThat(schedule.waitNanos(T0)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aRediscoveryThatFindsAnotherMountBringsAPassAtOnce() {
    TriggerWork triggers = triggers(finding(Set.of(DEV, OTHER), false));
    triggers.passSaw(passed(0));

    triggers.carryOut(WorkRequest.Trigger.REDISCOVER, T0);

    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void aRediscoveryThatFindsAContainerEndedOnAMountStillThereBringsAPassAtOnce() {
    TriggerWork triggers = triggers(finding(Set.of(DEV), true));
    triggers.passSaw(passed(0));

    triggers.carryOut(WorkRequest.Trigger.REDISCOVER, T0);

    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void afterAReloadTheMountsAreLookedForWithItsRediscoveryOnThePassThread() {
    TriggerWork triggers = triggers(finding(Set.of(DEV), false));
    triggers.passSaw(passed(0));
    List<String> lookedOn = new CopyOnWriteArrayList<>();
    triggers.rediscoverWith(() -> {
      lookedOn.add(Thread.currentThread().getName());
      return Set.of(OTHER);
    });

    triggers.carryOut(WorkRequest.Trigger.REDISCOVER, T0);

    assertThat(lookedOn).containsExactly("shmguard-pass");
    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void theSummaryTellsTheOutputsOfEachMountOfTheLastPassAndWhatWasReapedSoFar() {
    TriggerWork triggers = triggers(finding(Set.of(), false));
    triggers.carryOut(WorkRequest.Trigger.SUMMARY, T0);
    assertThat(told).as("no pass yet: nothing to sum up").isEmpty();

    passed(3);
    triggers.carryOut(WorkRequest.Trigger.SUMMARY, T0);

    assertThat(told).hasSize(1);
    PassReport summary = told.get(0);
    assertThat(summary.kind()).isEqualTo(PassReport.Kind.BETWEEN);
    assertThat(summary.alerts()).extracting(Alert::kind).containsExactly(EventKind.SUMMARY);
    assertThat(summary.alerts().get(0).field("SHM_REAPED_TOTAL")).isEqualTo("3");
    assertThat(schedule.waitNanos(T0)).as("a summary is no pass").isEqualTo(Long.MAX_VALUE);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
