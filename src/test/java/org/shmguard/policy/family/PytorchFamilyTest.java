package org.shmguard.policy.family;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/** torch_<pid>_<random>_<n>: reaped only when its creator is provably dead, after the grace. */
class PytorchFamilyTest {
  private static final String FILE = "torch_4242_3735928559_7";

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("held by a receiver").file(FILE, 1 << 20, Duration.ofHours(1)).heldBy(77),
            Verdict.HELD, false, "held by pid 77"),
        row(FamilyCase.of("unheld, younger than its 5m grace").file(FILE, 1 << 20, Duration.ofMinutes(4)),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("holders exited but within grace: not leaked yet").file(FILE, 1 << 20, Duration.ofMinutes(1))
            .heldBeforeByExited(4242), Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("past grace, creator pid absent: reaped").file(FILE, 1 << 20, Duration.ofMinutes(6)),
            Verdict.LEAKED, true, "its creator, pid 4242 (from its name), has exited"),
        row(FamilyCase.of("past grace, creator alive: reported only").file(FILE, 1 << 20, Duration.ofMinutes(6))
            .running(4242, 500), Verdict.LEAKED, false, "its creator, pid 4242 (from its name), is alive"),
        row(FamilyCase.of("past grace, creator pid reused by a later process").file(FILE, 1 << 20, Duration.ofMinutes(6))
            .heldBeforeByExited(4242).running(4242, 999_999), Verdict.LEAKED, true, "that pid now belongs to a later process"),
        row(FamilyCase.of("on a container's mount, its creator alive in the container's PID namespace: kept").file(FILE,
            1 << 20, Duration.ofMinutes(6)).onContainerMount().runningInPidNamespace(4026532201L, 81234,
            Duration.ofHours(1), true), Verdict.LEAKED, false, "pid 4242 of PID namespace 4026532201 (host pid 81234)"),
        row(FamilyCase.of("on a container's mount, no process of any namespace has its pid: reaped").file(FILE,
            1 << 20, Duration.ofMinutes(6)).onContainerMount(), Verdict.LEAKED, true, "has exited"),
        row(FamilyCase.of("families.pytorch.reap on does not reap with its creator alive").file(FILE, 1 << 20,
            Duration.ofMinutes(2)).running(4242, 500).configured("pytorch", true, Duration.ofMinutes(1)),
            Verdict.LEAKED, false, "kept: its creator, pid 4242 (from its name), is alive"),
        row(FamilyCase.of("a reap.patterns entry does not reap it with its creator alive either").file(FILE, 1 << 20,
            Duration.ofMinutes(6)).running(4242, 500).patterns("nccl-*", "torch_*"),
            Verdict.LEAKED, false, "kept: its creator, pid 4242 (from its name), is alive"),
        row(FamilyCase.of("another user's sleeper with its pid, in that user's PID namespace: not its creator").file(FILE,
            1 << 20, Duration.ofMinutes(6)).runningAsUser(4026532555L, 90001, 65534),
            Verdict.LEAKED, true, "runs as another user (uid 65534), not the file's owner (uid 1000)"),
        row(FamilyCase.of("another user's process with its pid on the host: not its creator").file(FILE,
            1 << 20, Duration.ofMinutes(6)).runningAsUser(4026531836L, 4242, 65534),
            Verdict.LEAKED, true, "runs as another user (uid 65534)"),
        row(FamilyCase.of("the owner's own process with its pid in another PID namespace: kept").file(FILE,
            1 << 20, Duration.ofMinutes(6)).runningAsUser(4026532555L, 90002, 1000),
            Verdict.LEAKED, false, "kept: its creator, pid 4242 (from its name), is alive"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedByItsCreatorPid(FamilyRow row) {
    row.check();
  }

  @Test
  void theNameFormatOfNewProcessWideShmHandle() {
    PytorchFamily f = new PytorchFamily();
    assertThat(f.creatorPid(FILE)).isEqualTo(OptionalInt.of(4242));
    assertThat(f.matches("torch_0")).isFalse();
    assertThat(f.matches("torch_12_x_3")).isFalse();
    assertThat(f.creatorPid("torch_0_1_2")).as("pid 0 is nobody's").isEmpty();
    assertThat(f.creatorPid("torch_99999999999_1_2")).as("more digits than any pid").isEmpty();
  }
}
