package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** UCX posix segments, named only with proc links off. */
class UcxFamilyTest {
  static Stream<FamilyRow> table() {
    return HeldForLifeRows.table("ucx", "ucx_shm_posix_2e841ba5");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void leakedOnceEveryHolderHasExitedAndReapedOnlyWhenConfigured(FamilyRow row) {
    row.check();
  }

  @Test
  void itsNamesAndNoOthers() {
    UcxFamily f = new UcxFamily();
    assertThat(f.matches("ucx_shm_posix_1f")).isTrue();
    assertThat(f.matches("ucx_shm_posix_")).isFalse();
    assertThat(f.matches("ucx_shm_sysv_1")).isFalse();
    assertThat(SegmentFamilies.standard().of("ucx_shm_posix_2e841ba5")).isInstanceOf(UcxFamily.class);
  }
}
