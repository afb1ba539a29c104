package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;

class CapacityPolicyTest {
  private final CapacityPolicy policy = new CapacityPolicy(80, 95, 5);

  @Test
  void levelsAreEnteredAtTheirThresholds() {
    assertThat(policy.next(CapacityLevel.OK, 79.9)).isEqualTo(CapacityLevel.OK);
    assertThat(policy.next(CapacityLevel.OK, 80)).isEqualTo(CapacityLevel.WARNING);
    assertThat(policy.next(CapacityLevel.OK, 95)).isEqualTo(CapacityLevel.CRITICAL);
  }

  @Test
  void levelsAreLeftOnlyBelowThresholdMinusHysteresis() {
    assertThat(policy.next(CapacityLevel.WARNING, 76)).isEqualTo(CapacityLevel.WARNING);
    assertThat(policy.next(CapacityLevel.WARNING, 74.9)).isEqualTo(CapacityLevel.OK);
    assertThat(policy.next(CapacityLevel.CRITICAL, 91)).isEqualTo(CapacityLevel.CRITICAL);
    assertThat(policy.next(CapacityLevel.CRITICAL, 89)).isEqualTo(CapacityLevel.WARNING);
    assertThat(policy.next(CapacityLevel.CRITICAL, 10)).isEqualTo(CapacityLevel.OK);
  }

  @Test
  void usageHoveringAroundAThresholdRaisesOneAlertNotAStorm() {
    CapacityWatch watch = CapacityWatch.start(policy);
    List<CapacityWatch.Change> changes = new ArrayList<>();
    for (double pct : new double[] {79, 81, 79, 80.5, 78, 81, 79.5, 82}) {
      CapacityWatch.Step step = watch.next(List.of(report(pct)));
      changes.addAll(step.changes());
      watch = step.watch();
    }
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0).to()).isEqualTo(CapacityLevel.WARNING);
  }

  @Test
  void aMountFirstSeenBelowTheThresholdsRaisesNothing() {
    assertThat(CapacityWatch.start(policy).next(List.of(report(10))).changes()).isEmpty();
  }

  @Test
  void thresholdsOutOfOrderAreRefused() {
    assertThatThrownBy(() -> new CapacityPolicy(90, 80, 5)).hasMessageContaining("warn < critical");
    assertThatThrownBy(() -> new CapacityPolicy(80, 95, 80)).hasMessageContaining("hysteresis");
  }

  private static MountReport report(double usedPercent) {
    long size = 1_000_000;
    long used = (long) (size * usedPercent / 100);
    ShmMount m = new ShmMount(Dev.of(0, 50), "/dev/shm", "/dev/shm", MountOrigin.HOST, "", null, List.of(), null,
        new ShmMount.Usage(size, used, size - used, 100, 50));
    return new MountReport(m, 0, 0, 0, List.of());
  }
}
