package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How long the worker's one poll may wait, from the schedule and the watchdog: plain JVM. */
class WatchesTest {
  @Test
  void nothingDueWaitsAMinute() {
    assertThat(Watches.timeoutMs(Long.MAX_VALUE, null)).isEqualTo(Watches.IDLE_WAIT_MS);
  }

  @Test
  void theSchedulesDeadlineIsRoundedUpToAMillisecond() {
    assertThat(Watches.timeoutMs(1, null)).isEqualTo(1);
    assertThat(Watches.timeoutMs(2_000_000, null)).isEqualTo(2);
    assertThat(Watches.timeoutMs(0, null)).isZero();
  }

  @Test
  void theWatchdogsPeriodShortensTheWaitButNeverLengthensIt() {
    assertThat(Watches.timeoutMs(Long.MAX_VALUE, Duration.ofSeconds(5))).isEqualTo(5_000);
    assertThat(Watches.timeoutMs(3_000_000, Duration.ofSeconds(5))).isEqualTo(3);
  }

  @Test
  void aLongWaitIsCutToAMinute() {
    assertThat(Watches.timeoutMs(Duration.ofHours(1).toNanos(), Duration.ofHours(2))).isEqualTo(Watches.IDLE_WAIT_MS);
  }
}
