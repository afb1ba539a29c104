package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/** sgl_shm_<kind>_<pid>_<hex>: handed from producer to consumer; reaped when its creator is provably dead. */
class SglangFamilyTest {
  private static final String FILE = "sgl_shm_mm_3131_0badf00d";

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("held by the scheduler").file(FILE, 1 << 16, Duration.ofMinutes(1)).heldBy(3200),
            Verdict.HELD, false, "held by pid 3200"),
        row(FamilyCase.of("the tokenizer closed it and lives: in grace").file(FILE, 1 << 16, Duration.ofMinutes(1))
            .heldBeforeByLiving(3131), Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("consumer exited, creator lives, past grace: reported").file(FILE, 1 << 16,
            Duration.ofMinutes(6)).heldBeforeByExited(3200).running(3131, 10), Verdict.LEAKED, false, "is alive"),
        row(FamilyCase.of("creator dead, past grace: reaped").file(FILE, 1 << 16, Duration.ofMinutes(6)),
            Verdict.LEAKED, true, "its creator, pid 3131 (from its name), has exited"),
        row(FamilyCase.of("creator dead but within grace: waits").file(FILE, 1 << 16, Duration.ofMinutes(2)),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("a name without a pid: reported only").file("sgl_shm_legacy", 1 << 16, Duration.ofMinutes(6)),
            Verdict.LEAKED, false, "families.sglang.reap is off"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedByItsCreatorPid(FamilyRow row) {
    row.check();
  }

  @Test
  void thePidIsTheSecondLastField() {
    SglangFamily f = new SglangFamily();
    assertThat(f.creatorPid("sgl_shm_mq_1234_abcd1234")).isEqualTo(OptionalInt.of(1234));
    assertThat(f.creatorPid("sgl_shm_xpu_tensor_77_abcd1234")).isEqualTo(OptionalInt.of(77));
    assertThat(f.creatorPid("sgl_shm_garbage")).isEmpty();
    assertThat(f.creatorPid("sgl_shm_mq_0_abcd1234")).isEmpty();
  }
}
