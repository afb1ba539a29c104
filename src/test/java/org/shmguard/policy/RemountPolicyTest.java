package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.shmguard.text.SizeSpec;

class RemountPolicyTest {
  private static final long MIB = 1L << 20;
  private static final long RAM = 16 * 1024 * MIB;
  private static final Instant NOW = Instant.parse("2026-01-01T12:00:00Z");
  private final RemountPolicy policy = new RemountPolicy(true, SizeSpec.ofBytes(2048 * MIB), SizeSpec.ofPercent(50), Duration.ofMinutes(10));

  @Test
  void growsToTheTarget() {
    RemountPolicy.Decision d = policy.decide(64 * MIB, 60 * MIB, null, RAM, null, NOW);

    assertThat(d.grow()).isTrue();
    assertThat(d.toBytes()).isEqualTo(2048 * MIB);
  }

  @Test
  void aPercentageTargetIsOfMemoryAndTheCapIsAPercentageToo() {
    RemountPolicy p = new RemountPolicy(true, SizeSpec.ofPercent(75), SizeSpec.ofPercent(50), Duration.ZERO);

    RemountPolicy.Decision d = p.decide(64 * MIB, 0, null, RAM, null, NOW);

    assertThat(d.toBytes()).isEqualTo(8192 * MIB);
    assertThat(d.reason()).contains("capped");
  }

  @Test
  void neverShrinksAndWaitsOutTheCooldown() {
    assertThat(policy.decide(4096 * MIB, 0, null, RAM, null, NOW).grow()).isFalse();
    RemountPolicy.Decision early = policy.decide(64 * MIB, 0, null, RAM, NOW.minusSeconds(60), NOW);
    assertThat(early.grow()).isFalse();
    assertThat(early.reason()).contains("1m ago; remount.cooldown is 10m");
    assertThat(policy.decide(64 * MIB, 0, null, RAM, NOW.minusSeconds(601), NOW).grow()).isTrue();
  }

  @Test
  void offMeansOff() {
    RemountPolicy off = new RemountPolicy(false, SizeSpec.ofBytes(2048 * MIB), SizeSpec.ofPercent(50), Duration.ZERO);

    assertThat(off.decide(64 * MIB, 64 * MIB, null, RAM, null, NOW).reason()).contains("remount.enabled: false");
  }

  @Test
  void sizesArePageAligned() {
    RemountPolicy.Decision d = policy.decide(64 * MIB, 0, 100 * MIB + 123, RAM, null, NOW);

    assertThat(d.toBytes() % RemountPolicy.PAGE).isZero();
  }

  @Test
  void withRemountingOffAnEventSaysWhyItsMountWasNotGrownBeforeThePodOrContainerItNames() {
    RemountPolicy off = new RemountPolicy(false, SizeSpec.ofBytes(2L << 30), SizeSpec.ofPercent(50), Duration.ofMinutes(10));
    org.shmguard.model.ShmMount m = new org.shmguard.model.ShmMount(org.shmguard.model.Dev.of(0, 48),
        "/var/lib/containers/storage/overlay-containers/" + "a".repeat(64) + "/userdata/shm", "/dev/shm",
        org.shmguard.model.MountOrigin.HOST, "rw", null, java.util.List.of(), null, null)
        .withWorkload(org.shmguard.model.Workload.container("podman", "a".repeat(64)));
    String tag = " [" + m.workload().describe() + "]";
    org.shmguard.alert.Alert failed = org.shmguard.alert.Alert.of(org.shmguard.alert.EventKind.ALLOCATION_FAILED,
        "failed NCCL allocation: nccl-Zero01" + tag);

    org.shmguard.alert.Alert noted = off.noteOn(failed, m);

    assertThat(noted.message()).isEqualTo("failed NCCL allocation: nccl-Zero01; not grown: " + RemountPolicy.OFF + tag);
    assertThat(noted.field("SHM_REMOUNT")).isEqualTo(RemountPolicy.OFF);
    RemountPolicy on = new RemountPolicy(true, SizeSpec.ofBytes(2L << 30), SizeSpec.ofPercent(50), Duration.ofMinutes(10));
    assertThat(on.noteOn(failed, m)).isSameAs(failed);
  }
}
