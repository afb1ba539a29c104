package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Open MPI's vader (3.x/4.x) and sm (5.x) segments: each rank's own, mapped by its peers. */
class OpenMpiFamilyTest {
  static Stream<FamilyRow> table() {
    return HeldForLifeRows.table("openMpi", "vader_segment.node01.5c3a0001.0");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void leakedOnceEveryHolderHasExitedAndReapedOnlyWhenConfigured(FamilyRow row) {
    row.check();
  }

  @Test
  void itsNamesAndNoOthers() {
    OpenMpiFamily f = new OpenMpiFamily();
    assertThat(f.matches("vader_segment.node01.1")).isTrue();
    assertThat(f.matches("sm_segment.node01.1000.5c3a0001.1")).isTrue();
    assertThat(f.matches("sm_segments")).isFalse();
    assertThat(f.matches("vader.node")).isFalse();
    assertThat(SegmentFamilies.standard().of("vader_segment.node01.5c3a0001.0")).isInstanceOf(OpenMpiFamily.class);
  }
}
