package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When the liveness and readiness answers turn, on a clock the test moves. */
class LivenessStaleTest {
  private final AtomicLong now = new AtomicLong();
  private final Liveness l = new Liveness(Duration.ofSeconds(120), Duration.ofSeconds(70), now::get);

  private void at(int seconds) {
    now.set(Duration.ofSeconds(seconds).toNanos());
  }

  @Test
  void aLoopWithoutPassesForLongerThanTheLimitIsNotAliveUntilTheNextPass() {
    at(100);
    assertThat(l.alive()).as("within the start-up allowance").isTrue();
    at(121);
    assertThat(l.alive()).isFalse();
    l.passCompleted();
    assertThat(l.alive()).isTrue();
  }

  @Test
  void aDaemonIsNotReadyBeforeItsFirstPassNorOnceItsLastPassIsLate() {
    at(1);
    assertThat(l.ready()).as("no pass yet").isFalse();
    assertThat(l.readiness().status()).isEqualTo(503);
    l.passCompleted();
    assertThat(l.ready()).isTrue();
    at(71);
    assertThat(l.readiness().status()).as("last pass 70 s ago").isEqualTo(200);
    at(72);
    assertThat(l.ready()).isFalse();
    assertThat(l.alive()).as("readiness fails first; liveness only at 120 s").isTrue();
    l.passCompleted();
    assertThat(l.ready()).isTrue();
  }
}
