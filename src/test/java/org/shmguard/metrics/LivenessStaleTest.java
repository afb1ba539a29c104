package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When the liveness answer turns from alive to stuck, on a clock the test moves. */
class LivenessStaleTest {
  @Test
  void aLoopWithoutPassesForLongerThanTheLimitIsNotAliveUntilTheNextPass() {
    AtomicLong now = new AtomicLong();
    Liveness l = new Liveness(Duration.ofSeconds(120), now::get);

    now.set(Duration.ofSeconds(100).toNanos());
    assertThat(l.alive()).as("within the start-up allowance").isTrue();
    now.set(Duration.ofSeconds(121).toNanos());
    assertThat(l.alive()).isFalse();
    l.passCompleted();
    assertThat(l.alive()).isTrue();
  }
}
