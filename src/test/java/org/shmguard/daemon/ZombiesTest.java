package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which exited holders the daemon keeps looking for, with the clock passed in. */
class ZombiesTest {
  private static final long T0 = 5_000_000_000L;
  private final Zombies zombies = new Zombies();

  @Test
  void anExitedHolderStillListedIsLookedForUntilItIsGone() {
    zombies.exited(7, T0);

    assertThat(zombies.afterPass(Set.of(7)::contains, T0 + 1_000_000)).isTrue();
    assertThat(zombies.afterPass(Set.of()::contains, T0 + 2_000_000)).isFalse();
  }

  @Test
  void aHolderListedLongerThanTheLimitIsNoLongerLookedFor() {
    zombies.exited(7, T0);

    assertThat(zombies.afterPass(Set.of(7)::contains, T0 + Zombies.GIVE_UP_NANOS)).isTrue();
    assertThat(zombies.afterPass(Set.of(7)::contains, T0 + Zombies.GIVE_UP_NANOS + 1)).isFalse();
  }

  @Test
  void theLimitCountsFromTheFirstExitSeenNotALaterOne() {
    zombies.exited(7, T0);
    zombies.exited(7, T0 + Zombies.GIVE_UP_NANOS);

    assertThat(zombies.afterPass(Set.of(7)::contains, T0 + Zombies.GIVE_UP_NANOS + 1)).isFalse();
  }

  @Test
  void nothingExitedIsNothingToLookFor() {
    assertThat(zombies.afterPass(pid -> true, T0)).isFalse();
  }
}
