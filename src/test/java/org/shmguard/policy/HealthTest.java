package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/** The health verdict of {@code shmguard check} on snapshots the kernel tests cannot easily make. */
class HealthTest {
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);

  private static Snapshot snapshot(ShmMount.Usage usage, List<String> problems, boolean hostPidNamespace) {
    ShmMount m = new ShmMount(Dev.of(0, 50), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", "mnt:[1]", List.of(), null, usage);
    return new Snapshot(Instant.EPOCH, List.of(m), List.of(), HolderIndex.empty(), new BitSet(), Map.of(), problems, List.of(),
        hostPidNamespace, 10);
  }

  @Test
  void incompleteProcPassIsAProblemEvenOnAnEmptyMount() {
    Snapshot s = snapshot(new ShmMount.Usage(1 << 20, 0, 1 << 20, 100, 100), List.of("cannot read /proc/42/maps: permission denied"), true);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.PROBLEM);
    assertThat(h.line()).isEqualTo("incomplete /proc pass: cannot read /proc/42/maps: permission denied");
    assertThat(h.status().exitCode()).isEqualTo(1);
  }

  @Test
  void mountThatCannotBeMeasuredIsUnknown() {
    Health h = Health.of(Judge.judge(snapshot(null, List.of(), true), HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.UNKNOWN);
    assertThat(h.status().exitCode()).isEqualTo(2);
    assertThat(h.line()).isEqualTo("unknown: cannot measure /dev/shm");
  }

  @Test
  void fillExactlyAtTheThresholdIsCritical() {
    Snapshot s = snapshot(new ShmMount.Usage(100 << 20, 90 << 20, 10 << 20, 100, 90), List.of(), true);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.PROBLEM);
    assertThat(h.line()).isEqualTo("/dev/shm 90% full (critical 90%)");
  }

  @Test
  void aMessageMustBeOneLine() {
    assertThatThrownBy(() -> new Health(Health.Status.OK, "two\nlines")).isInstanceOf(IllegalArgumentException.class);
    assertThat(Health.unknown("a\nb").line()).isEqualTo("unknown: a b");
  }
}
