package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The Triton Python backend's regions: held by the server and its stub while the model instance lives. */
class TritonPythonFamilyTest {
  static Stream<FamilyRow> table() {
    return HeldForLifeRows.table("tritonPython", "triton_python_backend_shm_region_635362a4-fff5-4a25-b34e-db6b2b2d3718");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void leakedOnceEveryHolderHasExitedAndReapedOnlyWhenConfigured(FamilyRow row) {
    row.check();
  }

  @Test
  void itsNamesAndNoOthers() {
    TritonPythonFamily f = new TritonPythonFamily();
    assertThat(f.matches("triton_python_backend_shm_region_7")).isTrue();
    assertThat(f.matches("triton_python_backend_shm_region_")).isFalse();
    assertThat(SegmentFamilies.standard().of("triton_python_backend_shm_region_635362a4-fff5-4a25-b34e-db6b2b2d3718")).isInstanceOf(TritonPythonFamily.class);
  }
}
