package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** vllm_offload_<instance>.mmap: mapped by every TP worker for the engine's life. */
class VllmOffloadFamilyTest {
  static Stream<FamilyRow> table() {
    return HeldForLifeRows.table("vllmOffload", "vllm_offload_engine0.mmap");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void leakedOnceEveryHolderHasExitedAndReapedOnlyWhenConfigured(FamilyRow row) {
    row.check();
  }

  @Test
  void itsNamesAndNoOthers() {
    VllmOffloadFamily f = new VllmOffloadFamily();
    assertThat(f.matches("vllm_offload_a1.mmap")).isTrue();
    assertThat(f.matches("vllm_offload_.mmap")).isFalse();
    assertThat(f.matches("vllm_offload_a1")).isFalse();
    assertThat(SegmentFamilies.standard().of("vllm_offload_engine0.mmap")).isInstanceOf(VllmOffloadFamily.class);
  }
}
