package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/** NCCL's rules, as before families existed: reaped by reap.patterns, fast path, failed creations. */
class NcclFamilyTest {
  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("held by a live rank").file("nccl-AbC123", 9_637_892, Duration.ofHours(1)).heldBy(100),
            Verdict.HELD, false, "held by pid 100"),
        row(FamilyCase.of("unheld, young, never seen held").file("nccl-AbC123", 9_637_892, Duration.ofSeconds(10)),
            Verdict.GRACE, false, "grace is 2m"),
        row(FamilyCase.of("unheld past reap.grace").file("nccl-AbC123", 9_637_892, Duration.ofMinutes(3)),
            Verdict.LEAKED, true, "(grace 2m)"),
        row(FamilyCase.of("young, every holder seen has exited: leaked at once").file("nccl-AbC123", 34_210_180,
            Duration.ofSeconds(5)).heldBeforeByExited(100).heldBeforeByExited(101),
            Verdict.LEAKED, true, "every process that held it has exited"),
        row(FamilyCase.of("young, the holder let go but lives").file("nccl-AbC123", 9_637_892, Duration.ofSeconds(5))
            .heldBeforeByLiving(100), Verdict.GRACE, false, "grace is 2m"),
        row(FamilyCase.of("0 bytes, unheld, young: failed creation").file("nccl-Zero01", 0, Duration.ofSeconds(1)),
            Verdict.FAILED_CREATION, true, "extension failed"),
        row(FamilyCase.of("old scheme, unheld past grace").file("nccl-shm-recv-1a2b-0-1-2", 9_637_888,
            Duration.ofMinutes(5)), Verdict.LEAKED, true, "unheld and unchanged"),
        row(FamilyCase.of("no pattern names NCCL: ignored, as before").file("nccl-AbC123", 4100, Duration.ofDays(1))
            .patterns("psm_*"), Verdict.IGNORED, false, "no reap.patterns entry matches"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedByNcclsRules(FamilyRow row) {
    row.check();
  }

  @Test
  void bothNamingSchemesAndEveryKindBySize() {
    NcclFamily f = new NcclFamily();
    assertThat(f.matches("nccl-AbC123")).isTrue();
    assertThat(f.matches("nccl-shm-send-1a-0-1-2")).isTrue();
    assertThat(f.kind("nccl-AbC123", 34_210_180)).isEqualTo("nccl-proxy-pool (2.28-2.30)");
    assertThat(f.kind("nccl-AbC123", 8_196)).isEqualTo("nccl-p2p-ce");
    assertThat(f.kind("nccl-shm-send-1a-0-1-2", 4_096)).isEqualTo("nccl-shm-send (<2.12)");
    assertThat(f.failedCreation(0)).isTrue();
    assertThat(f.defaultGrace()).as("NCCL's grace is reap.grace").isNull();
  }
}
