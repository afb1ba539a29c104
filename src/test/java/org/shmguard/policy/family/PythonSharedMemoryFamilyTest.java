package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/** psm_ + 8 hex: a creator may hand it on and exit, so only the grace, and reported unless configured. */
class PythonSharedMemoryFamilyTest {
  private static final String FILE = "psm_1a2b3c4d";

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("held by its creator").file(FILE, 4096, Duration.ofHours(1)).heldBy(50),
            Verdict.HELD, false, "held by pid 50"),
        row(FamilyCase.of("its creator exited a moment ago: not leaked, it may be handed on").file(FILE, 4096,
            Duration.ofSeconds(3)).heldBeforeByExited(50), Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("unheld past its grace: leaked, reported, not reaped").file(FILE, 4096, Duration.ofMinutes(11)),
            Verdict.LEAKED, false, "reported, not reaped: families.pythonShm.reap is off and its creator may have handed it on"),
        row(FamilyCase.of("0 bytes is no failed creation here").file(FILE, 0, Duration.ofSeconds(3)),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("families.pythonShm.reap on: reaped after its grace").file(FILE, 4096, Duration.ofMinutes(31))
            .configured("pythonShm", true, Duration.ofMinutes(30)), Verdict.LEAKED, true, "(grace 30m)"),
        row(FamilyCase.of("a reap.patterns entry reaps it too").file(FILE, 4096, Duration.ofMinutes(11))
            .patterns("nccl-*", "psm_*"), Verdict.LEAKED, true, "(grace 10m)"),
        row(FamilyCase.of("not its format: no family, no pattern, ignored").file("psm_xyz", 4096, Duration.ofDays(1)),
            Verdict.IGNORED, false, "no reap.patterns entry matches"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedByGraceAlone(FamilyRow row) {
    row.check();
  }

  @Test
  void theNameIsPsmAndEightHexDigits() {
    PythonSharedMemoryFamily f = new PythonSharedMemoryFamily();
    assertThat(f.matches("psm_deadbeef")).isTrue();
    assertThat(f.matches("psm_deadbee")).isFalse();
    assertThat(f.matches("psm_DEADBEEF")).as("token_hex writes lower case").isFalse();
    assertThat(f.holdersExitedMeansLeaked()).isFalse();
    assertThat(f.creatorPid("psm_12345678")).isEmpty();
  }
}
