package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountContents;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.ReapPlan;
import org.shmguard.remedy.ReapOutcome;

/**
 * How each pass's result, an exit pass's or a full pass's, reaches the schedule, the watches, the
 * zombies and the status: a real {@link PassSchedule}, the clock standing still at T0, the watches a mock.
 */
class PassLedgerTest {
  private static final long MS = 1_000_000L;
  private static final long SETTLE = 200 * MS;
  private static final long T0 = 5_000_000_000L;
  private static final Dev DEV = Dev.of(0, 25);
  private static final ReapOutcome REAPED = new ReapOutcome(null, ReapOutcome.Result.REAPED, "nothing holds it");

  private final PassSchedule schedule = new PassSchedule(SETTLE);
  private final Watches watches = mock(Watches.class);
  private final PassLedger ledger = new PassLedger(schedule, watches, SETTLE, () -> T0);

  private static Engine.Exit exitPass(boolean complete, int reaped) {
    PassReport report = reaped == 0 ? null
        : PassReport.exitPass(java.util.Collections.nCopies(reaped, REAPED), List.of(), Duration.ofMillis(1));
    return new Engine.Exit(report == null ? List.of() : report.outcomes(), complete, report);
  }

  /** A full pass's report whose /proc pass listed {@code alive}. */
  private static PassReport fullPass(Duration took, List<ReapOutcome> outcomes, long unexamined, Duration lookAgainIn,
      int... alive) {
    BitSet live = new BitSet();
    for (int pid : alive) {
      live.set(pid);
    }
    MountContents contents = new MountContents(DEV, 10, 40960, 0, 10, 40960, (int) (10 - unexamined), 10);
    Snapshot snap = new Snapshot(Instant.EPOCH, List.of(), List.of(), HolderIndex.empty(), live, Map.of(), List.of(),
        List.of(), true, alive.length, List.of(contents));
    Judgement j = new Judgement(snap, List.of(), List.of(), new ReapPlan(List.of(), List.of()));
    return new PassReport(j, new Plan(List.of(), lookAgainIn), outcomes, List.of(), List.of(), false, took);
  }

  private static PassReport quietPass(int... alive) {
    return fullPass(Duration.ofMillis(2), List.of(), 0, null, alive);
  }

  /** Runs a full pass as the worker does: the schedule told it starts, then the ledger told how it ended. */
  private void pass(PassReport report, long yieldedNanos) {
    schedule.passStarts();
    ledger.fullPassEnded(report, yieldedNanos);
  }

  @Test
  void anExitPassThatDidAllThereWasCountsItsReapsAndBringsItsFullPassOnceExitsAreQuiet() {
    pass(quietPass(), 0);

    ledger.exitPassEnded(exitPass(true, 2), T0);

    assertThat(ledger.status().reaped()).isEqualTo(2);
    assertThat(ledger.status().passes()).as("an exit pass is not a full pass").isEqualTo(1);
    assertThat(schedule.isDue(T0 + PassSchedule.EXIT_QUIET_NANOS - 1)).isFalse();
    assertThat(schedule.isDue(T0 + PassSchedule.EXIT_QUIET_NANOS)).isTrue();
  }

  @Test
  void anExitPassThatLeftWorkOrDidNotRunBringsAFullPassAtOnce() {
    pass(quietPass(), 0);
    ledger.exitPassEnded(exitPass(false, 1), T0);
    assertThat(schedule.isDue(T0)).isTrue();
    assertThat(ledger.status().reaped()).isEqualTo(1);

    pass(quietPass(), 0);
    ledger.exitPassEnded(null, T0);
    assertThat(schedule.isDue(T0)).as("not run: the budget spent, a stop or an error").isTrue();
    assertThat(ledger.status().reaped()).isEqualTo(1);
  }

  @Test
  void theExitsAFullPassYieldedToAreUnwatchedAccountedAndTheirTimeReturned() {
    pass(quietPass(), 0);
    schedule.passStarts();

    long took = ledger.yielded(List.of(new ExitReaps.Yielded(new int[] {7}, exitPass(true, 1), T0, 3 * MS),
        new ExitReaps.Yielded(new int[] {8, 9}, null, T0, 2 * MS)));

    assertThat(took).isEqualTo(5 * MS);
    verify(watches).exited(new int[] {7});
    verify(watches).exited(new int[] {8, 9});
    assertThat(ledger.status().reaped()).isEqualTo(1);
    assertThat(schedule.isDue(T0)).as("one of them did not run: the full pass at once").isTrue();
  }

  @Test
  void nothingYieldedIsNothingToAccount() {
    assertThat(ledger.yielded(List.of())).isZero();
    assertThat(ledger.status()).isEqualTo(DaemonStatus.START);
  }

  @Test
  void anExitedHolderThePassStillListsBringsARetryAndOneItNoLongerListsDoesNot() {
    pass(quietPass(), 0);
    ledger.exitsSeen(new int[] {7}, T0);

    pass(quietPass(7), 0);
    assertThat(schedule.isDue(T0 + PassSchedule.ZOMBIE_RETRY_START_NANOS - 1)).isFalse();
    assertThat(schedule.isDue(T0 + PassSchedule.ZOMBIE_RETRY_START_NANOS)).as("a zombie: looked for again").isTrue();

    pass(quietPass(), 0);
    assertThat(schedule.waitNanos(T0)).as("reaped by its parent: nothing more to look for").isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aYieldedExitIsLookedForAsAZombieToo() {
    pass(quietPass(), 0);
    schedule.passStarts();
    ledger.yielded(List.of(new ExitReaps.Yielded(new int[] {7}, exitPass(false, 0), T0, MS)));
    schedule.passStarts(); // the pass its leftover work brought

    ledger.fullPassEnded(quietPass(7), 0);

    assertThat(schedule.isDue(T0 + PassSchedule.ZOMBIE_RETRY_START_NANOS - 1)).isFalse();
    assertThat(schedule.isDue(T0 + PassSchedule.ZOMBIE_RETRY_START_NANOS)).isTrue();
  }

  @Test
  void aFullPassIsCountedWithTheWatchesFiguresAfterIt() {
    when(watches.mounts()).thenReturn(2);
    when(watches.holderCount()).thenReturn(3);
    when(watches.overflows()).thenReturn(4L);
    PassReport report = fullPass(Duration.ofMillis(2), List.of(REAPED), 0, null);

    pass(report, 0);

    DaemonStatus s = ledger.status();
    assertThat(s.passes()).isEqualTo(1);
    assertThat(s.reaped()).isEqualTo(1);
    assertThat(s.last()).isSameAs(report.judgement());
    assertThat(List.of(s.watchedMounts(), s.watchedHolders())).containsExactly(2, 3);
    assertThat(s.overflows()).isEqualTo(4);
    verify(watches).sync(report.judgement());
  }

  @Test
  void somethingThatChangedBeforeItsWatchExistedBringsAnotherPassAtOnce() {
    pass(quietPass(), 0);
    assertThat(schedule.isDue(T0)).isFalse();

    when(watches.sync(any())).thenReturn(true);
    pass(quietPass(), 0);

    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void aPassThatReapedAndLeftFilesUnexaminedBringsTheNextBatchAtOnce() {
    pass(fullPass(Duration.ofMillis(2), List.of(), 5, null), 0);
    assertThat(schedule.isDue(T0)).as("nothing reaped: no room made").isFalse();

    pass(fullPass(Duration.ofMillis(2), List.of(REAPED), 0, null), 0);
    assertThat(schedule.isDue(T0)).as("everything examined").isFalse();

    pass(fullPass(Duration.ofMillis(2), List.of(REAPED), 5, null), 0);
    assertThat(schedule.isDue(T0)).isTrue();
  }

  @Test
  void aGraceEndingBringsAPassThen() {
    pass(fullPass(Duration.ofMillis(2), List.of(), 0, Duration.ofSeconds(1)), 0);

    assertThat(schedule.isDue(T0 + 999 * MS)).isFalse();
    assertThat(schedule.isDue(T0 + 1_000 * MS)).isTrue();
  }

  @Test
  void theExitPassesAFullPassYieldedToAreNotChargedToThePassesBudget() {
    pass(fullPass(Duration.ofSeconds(3), List.of(), 0, null), Duration.ofSeconds(3).toNanos());
    schedule.event(T0 - SETTLE);
    assertThat(schedule.isDue(T0)).as("3 s, all of it exit passes: the budget is whole").isTrue();

    PassSchedule spent = new PassSchedule(SETTLE);
    PassLedger another = new PassLedger(spent, watches, SETTLE, () -> T0);
    spent.passStarts();
    another.fullPassEnded(fullPass(Duration.ofSeconds(3), List.of(), 0, null), 0);
    spent.event(T0 - SETTLE);
    assertThat(spent.isDue(T0)).as("3 s of its own: past the 2 s burst, the next event pass waits").isFalse();
  }
}
