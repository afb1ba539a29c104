package org.shmguard.policy.family;

import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/**
 * The creator pid in a PyTorch name judged in the PID namespace the name was made in: a live
 * process anywhere that has the pid in its own namespace, can reach the mount and started before
 * the file keeps it; a restarted container's reused small pid, a later process, or one that
 * cannot reach the mount does not; and where the lookup could not tell, the file is kept.
 */
class CreatorPidNamespaceRowsTest {
  private static final String FILE = "torch_45_3735928559_7";
  private static final long CONTAINER = 4026532201L;
  private static final long RESTARTED = 4026532777L;

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("creator alive in a container's own PID namespace on the shared tmpfs: kept")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(6))
            .runningInPidNamespace(CONTAINER, 81234, Duration.ofHours(1), true),
            Verdict.LEAKED, false, "kept: its creator, pid 45 (from its name), is alive: pid 45 of PID namespace "
                + CONTAINER + " (host pid 81234) can reach this mount and started before the file was made"),
        row(FamilyCase.of("container restarted in a fresh PID namespace reusing pid 45: reaped")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(30))
            .runningInPidNamespace(RESTARTED, 90001, Duration.ofMinutes(2), true),
            Verdict.LEAKED, true, "has exited; that pid now belongs to a later process or one that cannot reach this "
                + "mount (PID namespace " + RESTARTED + " (host pid 90001) started after the file was made)"),
        row(FamilyCase.of("the old and the restarted namespace both have pid 45, the old one alive: kept")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(30))
            .runningInPidNamespace(RESTARTED, 90001, Duration.ofMinutes(2), true)
            .runningInPidNamespace(CONTAINER, 81234, Duration.ofHours(1), true),
            Verdict.LEAKED, false, "(host pid 81234) can reach this mount"),
        row(FamilyCase.of("a process born after the file in shmguard's own namespace is not its creator: reaped")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(10))
            .runningSince(45, Duration.ofMinutes(1)),
            Verdict.LEAKED, true, "(pid 45 started after the file was made)"),
        row(FamilyCase.of("a process started one tick after the file's birth may still be its creator: kept")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(10))
            .runningSince(45, Duration.ofMinutes(10).minusMillis(10)),
            Verdict.LEAKED, false, "is alive: pid 45 can reach this mount"),
        row(FamilyCase.of("pid 45 alive on the host, but in a mount namespace without this tmpfs: reaped")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(10))
            .runningInPidNamespace(CONTAINER, 81234, Duration.ofHours(1), false),
            Verdict.LEAKED, true, "(host pid 81234) cannot reach this mount"),
        row(FamilyCase.of("every process that could reach the mount is gone: its pids are all dead, reaped")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(10)),
            Verdict.LEAKED, true, "has exited: no live process that can reach this mount has pid 45 in its own PID namespace"),
        row(FamilyCase.of("pid 45 alive elsewhere and the file's birth time unknown: kept")
            .file(FILE, 1 << 20, Duration.ofMinutes(6))
            .runningInPidNamespace(RESTARTED, 90001, Duration.ofMinutes(2), true),
            Verdict.LEAKED, false, "the file's birth time is unknown"),
        row(FamilyCase.of("the lookup could not read a process: kept, and the reason says which")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(10))
            .lookupMissed("cannot read the PID namespace of pid 777"),
            Verdict.LEAKED, false, "may be alive: cannot read the PID namespace of pid 777"),
        row(FamilyCase.of("a pass that did not look the pid up proves nothing: kept")
            .file(FILE, 1 << 20, Duration.ofMinutes(6)).notLookedUp(),
            Verdict.LEAKED, false, "that pid was not looked up in this pass"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedInTheNamesOwnPidNamespace(FamilyRow row) {
    row.check();
  }
}
