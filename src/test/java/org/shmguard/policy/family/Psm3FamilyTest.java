package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** PSM3's per-endpoint segments. */
class Psm3FamilyTest {
  static Stream<FamilyRow> table() {
    return HeldForLifeRows.table("psm3", "psm3_shm.1000.0x1a2b.0");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void leakedOnceEveryHolderHasExitedAndReapedOnlyWhenConfigured(FamilyRow row) {
    row.check();
  }

  @Test
  void itsNamesAndNoOthers() {
    Psm3Family f = new Psm3Family();
    assertThat(f.matches("psm3_shm.10000000000001a2b0")).isTrue();
    assertThat(f.matches("psm3_shm.")).isFalse();
    assertThat(f.matches("psm2_shm.1")).isFalse();
    assertThat(SegmentFamilies.standard().of("psm3_shm.1000.0x1a2b.0")).isInstanceOf(Psm3Family.class);
  }
}
