package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.Segment;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Verdict;

/** Which skips leave a leak in place that the operator must hear of. */
class ReapOutcomeTest {
  private static final Assessment LEAK = new Assessment(new Segment(Dev.of(0, 25),
      "nccl-Leak01".getBytes(StandardCharsets.UTF_8), 7, 4100, 8192, 0100600, 1000, 1, 0, 0), null, Verdict.LEAKED,
      "unheld", "nccl-shm-send", List.of(), Duration.ofMinutes(5), List.of());

  private static ReapOutcome skipped(String detail) {
    return new ReapOutcome(LEAK, ReapOutcome.Result.SKIPPED, detail);
  }

  @Test
  void unavailableLeasesAndAnIncompletePassLeaveALeak() {
    assertThat(skipped(ReapOutcome.NO_LEASES + " (fcntl F_SETLEASE F_WRLCK: Permission denied)").leftLeaked()).isTrue();
    assertThat(skipped(ReapOutcome.INCOMPLETE_PASS + ": pid 4 unreadable").leftLeaked()).isTrue();
  }

  @Test
  void aFileHeldElsewhereRacedGoneOrReapedIsNoLeftLeak() {
    assertThat(skipped(LeasedUnlink.HELD_ELSEWHERE).leftLeaked()).isFalse();
    assertThat(skipped(LeasedUnlink.RACED + "; it was put back").leftLeaked()).isFalse();
    assertThat(skipped("it is already gone").leftLeaked()).isFalse();
    assertThat(new ReapOutcome(LEAK, ReapOutcome.Result.REAPED, "unheld").leftLeaked()).isFalse();
  }
}
