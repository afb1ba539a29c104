package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.text.Glob;

class ReapPolicyTest {
  private static final ReapPolicy NCCL_ONLY =
      new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(Glob.of("cuda.shm.*")), true);

  @Test
  void aFileLeftUnderTheLastChecksHiddenNameIsExaminedWhateverThePatterns() {
    assertThat(NCCL_ONLY.allowing(".shmguard-reap-0123456789abcdef")).isSameAs(ReapPolicy.STRANDED);
    assertThat(NCCL_ONLY.examines(".shmguard-reap-0123456789abcdef")).isTrue();
  }

  @Test
  void aHiddenNameThatEndsWithTheFilesOwnNameIsExaminedToo() {
    assertThat(NCCL_ONLY.allowing(".shmguard-reap-0123456789abcdef-psm_0123abcd")).isSameAs(ReapPolicy.STRANDED_NAMED);
    assertThat(NCCL_ONLY.allowing(".shmguard-reap-0123456789abcdef-")).isNull();
  }

  @Test
  void onlyTheExactHiddenNameShapeIsAllowed() {
    assertThat(NCCL_ONLY.allowing(".shmguard-reap-")).isNull();
    assertThat(NCCL_ONLY.allowing(".shmguard-reap-0123456789abcdef0")).isNull();
    assertThat(NCCL_ONLY.allowing("shmguard-reap-0123456789abcdef")).isNull();
    assertThat(NCCL_ONLY.allowing("psm_0123abcd")).isNull();
  }

  @Test
  void theDenyListStillWinsOverTheHiddenName() {
    ReapPolicy denying = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")),
        List.of(Glob.of(".shmguard-reap-*")), true);
    assertThat(denying.examines(".shmguard-reap-0123456789abcdef")).isFalse();
  }
}
