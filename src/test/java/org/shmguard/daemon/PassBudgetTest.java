package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Event passes: two seconds of them back to back, then each waits twice its length. */
class PassBudgetTest {
  private static final long MS = 1_000_000L;

  @Test
  void aBurstOfShortPassesRunsBackToBack() {
    PassBudget b = new PassBudget();
    long now = 0;
    for (int i = 0; i < 15; i++) {
      now += 50 * MS;
      b.spent(50 * MS, now);
      assertThat(b.nextAt(now)).as("after pass %d", i).isEqualTo(now);
    }
  }

  @Test
  void onceTheBudgetIsSpentEachPassWaitsTwiceItsLength() {
    PassBudget b = new PassBudget();
    long now = 0;
    b.spent(2000 * MS, now += 2000 * MS); // the burst allowance, spent at once
    b.spent(1000 * MS, now += 1000 * MS);
    long next = b.nextAt(now);
    assertThat(next - now).isCloseTo(2000 * MS, within(10L));
    for (int i = 0; i < 5; i++) {
      now = next + 1000 * MS; // runs when allowed, for a second
      b.spent(1000 * MS, now);
      next = b.nextAt(now);
      assertThat(next - now).as("pause after pass %d", i).isCloseTo(2000 * MS, within(10L));
    }
  }

  @Test
  void aPassOfMinutesWaitsAtMostTenSeconds() {
    PassBudget b = new PassBudget();
    b.spent(300_000 * MS, 300_000 * MS);
    assertThat(b.nextAt(300_000 * MS)).isEqualTo(310_000 * MS);
  }

  @Test
  void quietTimeRefillsTheBurstButNoMore() {
    PassBudget b = new PassBudget();
    long now = 0;
    b.spent(3000 * MS, now += 3000 * MS);
    now += 60_000 * MS; // a quiet minute refills two seconds, not twenty
    for (int i = 0; i < 19; i++) {
      b.spent(100 * MS, now += 100 * MS);
    }
    assertThat(b.nextAt(now)).isEqualTo(now);
    b.spent(2000 * MS, now += 2000 * MS);
    assertThat(b.nextAt(now)).isGreaterThan(now);
  }
}
