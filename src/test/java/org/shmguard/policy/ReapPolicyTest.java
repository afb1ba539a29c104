package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.family.FamilyRules;
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

  /** Names shmguard may reap on a mount come first in a pass's share; those it only reports take what is left. */
  @Test
  void whetherANameMayBeReapedDependsOnItsPatternItsFamilyAndWhereItLies() {
    ReapPolicy defaults = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(Glob.of("cuda.shm.*")),
        true, FamilyRules.defaults());
    ShmMount host = new ShmMount(Dev.of(0, 25), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null, null);
    String emptyDir = "/var/lib/kubelet/pods/x/volumes/kubernetes.io~empty-dir/shm";
    ShmMount volume = new ShmMount(Dev.of(0, 26), emptyDir, emptyDir, MountOrigin.VOLUME, "rw", null, List.of(), null, null);
    assertThat(defaults.mayReap(host, "nccl-x")).as("a pattern allows it").isTrue();
    assertThat(defaults.mayReap(host, "torch_123_456_0")).as("its name gives its creator").isTrue();
    assertThat(defaults.mayReap(host, "psm_0123abcd")).as("Python's: judged, only reported").isFalse();
    assertThat(defaults.examines("psm_0123abcd")).isTrue();
    assertThat(defaults.mayReap(host, "vader_segment.node01.1")).as("held for life, on the host's /dev/shm").isFalse();
    assertThat(defaults.mayReap(volume, "vader_segment.node01.1")).as("on a volume whose writers may all be gone").isTrue();
    assertThat(defaults.mayReap(host, "cuda.shm.0")).as("denied").isFalse();
    assertThat(defaults.mayReap(host, "random")).isFalse();
  }
}
