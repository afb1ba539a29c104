package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Every timing rule of the worker loop, on a clock the test moves: no root, no threads, no sleeps. */
class PassScheduleTest {
  private static final long MS = 1_000_000L;
  private static final long SETTLE = 200 * MS;
  private final PassSchedule s = new PassSchedule(SETTLE);

  /** Runs a pass at {@code at} that took {@code took} ns, as the worker does; returns whether it rediscovered. */
  private boolean pass(long at, long took) {
    boolean rediscover = s.passStarts();
    s.passEnded(at + took, took, false, null);
    return rediscover;
  }

  @Test
  void nothingIsDueUntilSomethingHappensAndTheLoopMaySleep() {
    pass(0, MS);
    assertThat(s.isDue(10_000 * MS)).isFalse();
    assertThat(s.waitNanos(10_000 * MS)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void anEventWaitsForTheSettleAndItsPassDiscoversTheMountsAgain() {
    pass(0, MS);
    s.event(1_000 * MS);

    assertThat(s.isDue(1_100 * MS)).isFalse();
    assertThat(s.waitNanos(1_100 * MS)).isEqualTo(100 * MS);
    assertThat(s.isDue(1_200 * MS)).isTrue();
    assertThat(s.passStarts()).as("mounts discovered again").isTrue();
  }

  @Test
  void eventPassesAreSpacedByTheBudgetButARequestIsNot() {
    long now = 0;
    for (int i = 0; i < 3; i++) { // 3 s of passes back to back: past the 2 s burst
      s.event(now - SETTLE);
      assertThat(s.isDue(now)).as("pass " + i).isTrue();
      pass(now, 1_000 * MS);
      now += 1_000 * MS;
    }
    s.event(now - SETTLE);
    assertThat(s.isDue(now)).as("the budget is spent: the next event pass waits").isFalse();
    assertThat(s.waitNanos(now)).isPositive();

    s.request(now);
    assertThat(s.isDue(now)).as("a sweep or a reload does not wait for the budget").isTrue();
  }

  @Test
  void anExitThePathHandledBringsItsPassOnceExitsAreQuietAtMostFiveSecondsAfterTheFirst() {
    pass(0, MS);
    long first = 1_000 * MS;
    s.exitHandled(first);
    assertThat(s.isDue(first + 499 * MS)).isFalse();
    assertThat(s.isDue(first + 500 * MS)).isTrue();

    long at = first;
    for (int i = 0; i < 20; i++) { // an exit every 400 ms: never quiet for 500 ms
      at += 400 * MS;
      s.exitHandled(at);
      assertThat(s.isDue(at)).isFalse();
      if (at >= first + PassSchedule.EXIT_MOST_DEFERRED_NANOS - 500 * MS) {
        break;
      }
    }
    assertThat(s.isDue(first + PassSchedule.EXIT_MOST_DEFERRED_NANOS)).as("at most 5 s after the first").isTrue();
    assertThat(s.passStarts()).as("exits alone add or remove no mount").isFalse();
  }

  @Test
  void theExitPathsOwnUnlinksWaitForItsPassAndAnExitItLeftWorkForBringsOneAtOnce() {
    pass(0, MS);
    s.exitHandled(1_000 * MS);
    s.mountEvents(1_001 * MS); // inotify events of its own unlinks
    assertThat(s.isDue(1_201 * MS)).as("not the settled event pass").isFalse();
    assertThat(s.isDue(1_500 * MS)).isTrue();
    assertThat(s.passStarts()).as("but the pass discovers again").isTrue();
    s.passEnded(1_510 * MS, 10 * MS, false, null);

    s.exitLeftWork(2_000 * MS);
    assertThat(s.isDue(2_000 * MS)).as("a death needs no settling").isTrue();
  }

  @Test
  void aGracesEndBringsAPassThenAndNeverSoonerThanFiftyMilliseconds() {
    s.passStarts();
    s.passEnded(0, MS, false, Duration.ofSeconds(3));
    assertThat(s.isDue(2_999 * MS)).isFalse();
    assertThat(s.waitNanos(0)).isEqualTo(3_000 * MS);
    assertThat(s.isDue(3_000 * MS)).isTrue();

    s.passStarts();
    s.passEnded(10_000 * MS, MS, false, Duration.ZERO);
    assertThat(s.isDue(10_049 * MS)).isFalse();
    assertThat(s.isDue(10_050 * MS)).isTrue();
  }

  @Test
  void zombiesAreLookedAtAgainWithABackoffThatDoublesToOneSecond() {
    long now = 0;
    long[] gaps = new long[8];
    for (int i = 0; i < gaps.length; i++) {
      s.passStarts();
      s.passEnded(now, MS, false, null);
      s.zombies(now, true);
      gaps[i] = s.waitNanos(now);
      now += gaps[i];
    }
    assertThat(gaps).containsExactly(20 * MS, 40 * MS, 80 * MS, 160 * MS, 320 * MS, 640 * MS, 1_000 * MS, 1_000 * MS);

    s.zombies(now, false);
    s.passStarts();
    s.zombies(now, true);
    assertThat(s.waitNanos(now)).as("reset once none are left").isEqualTo(20 * MS);
  }

  @Test
  void aPassThatReapedAndLeftFilesUnexaminedBringsTheNextBatchAtOnce() {
    s.passStarts();
    s.passEnded(0, MS, true, null);
    assertThat(s.isDue(0)).isTrue();
    assertThat(s.passStarts()).as("on the same mounts").isFalse();
  }
}
