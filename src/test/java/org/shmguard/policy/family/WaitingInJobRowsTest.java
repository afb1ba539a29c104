package org.shmguard.policy.family;

import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/**
 * An unheld PyTorch batch past its grace waits while its job may still receive it: a live
 * torch_shm_manager of the file's owner (uid 1000 here), with the file's tmpfs at its /dev/shm,
 * started no later than the file and with a client left, makes it {@code waiting} (neither reaped
 * nor leaked), whether its producer has exited or not. A manager of another uid, one without
 * clients, one that cannot reach the mount at /dev/shm or one started after the file keeps
 * nothing; a job killed whole leaves no manager, and its files are reaped as before.
 */
class WaitingInJobRowsTest {
  private static final String FILE = "torch_45_3735928559_7";
  private static final String WAITS = "but its job may still receive it: torch_shm_manager pid 7001 (uid 1000) has 1 client on "
      + "/tmp/torch-shm-dir-Ab12Cd/manager.sock and unlinks the files registered with it once its last client has gone";

  private static FamilyCase batch(String what) {
    return FamilyCase.of(what).file(FILE, 1 << 20, Duration.ofMinutes(6)).bornAgo(Duration.ofMinutes(6));
  }

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(batch("producer exited, its consumer a client of the owner's manager: waiting")
            .torchManager(7001, 1000, 1, Duration.ofMinutes(7), true),
            Verdict.WAITING, false, "unheld and unchanged for 6m (grace 5m), " + WAITS),
        row(batch("producer alive, batches in a live DataLoader's queue: waiting, not a kept leak")
            .runningSince(45, Duration.ofMinutes(8))
            .torchManager(7001, 1000, 1, Duration.ofMinutes(7), true),
            Verdict.WAITING, false, WAITS),
        row(batch("a manager started one second after the file (a job's first file comes first): waiting")
            .torchManager(7001, 1000, 1, Duration.ofMinutes(6).minusMillis(900), true),
            Verdict.WAITING, false, WAITS),
        row(batch("another uid's live manager keeps nothing: reaped")
            .torchManager(7001, 65534, 3, Duration.ofMinutes(7), true),
            Verdict.LEAKED, true, "its creator, pid 45 (from its name), has exited"),
        row(batch("the owner's manager with no client left (it unlinks all and exits): reaped")
            .torchManager(7001, 1000, 0, Duration.ofMinutes(7), true),
            Verdict.LEAKED, true, "has exited"),
        row(batch("the owner's manager in a mount namespace without this tmpfs at /dev/shm: reaped")
            .torchManager(7001, 1000, 1, Duration.ofMinutes(7), false),
            Verdict.LEAKED, true, "has exited"),
        row(batch("a later job of the owner, its manager started after the file: reaped")
            .torchManager(7001, 1000, 2, Duration.ofMinutes(1), true),
            Verdict.LEAKED, true, "has exited"),
        row(batch("the job killed whole, no manager left: reaped after the grace"),
            Verdict.LEAKED, true, "unheld and unchanged for 6m (grace 5m); its creator, pid 45 (from its name), has exited"),
        row(batch("the manager lookup could not tell whose a process is: waiting, and the reason says why")
            .torchManagersMissed("cannot read /proc/777/stat"),
            Verdict.WAITING, false, "a torch_shm_manager of its owner may have been missed (cannot read /proc/777/stat)"),
        row(batch("the owner's manager could not be read: waiting, and the reason says why")
            .torchManagerMissedOf(1000, "cannot read torch_shm_manager pid 777 (uid 1000): /proc/777/fd: no such directory"),
            Verdict.WAITING, false, "a torch_shm_manager of its owner may have been missed (cannot read torch_shm_manager "
                + "pid 777 (uid 1000)"),
        row(batch("another user's process named torch_shm_manag that cannot be read keeps nothing: reaped")
            .torchManagerMissedOf(65534, "cannot read torch_shm_manager pid 778 (uid 65534): a zombie's fds"),
            Verdict.LEAKED, true, "has exited"),
        row(batch("another user's managers beyond what a pass examines keep nothing: reaped")
            .torchManagerMissedOf(65534, "more than 8 torch_shm_managers of uid 65534, more than one pass examines"),
            Verdict.LEAKED, true, "has exited"),
        row(FamilyCase.of("in its grace the manager changes nothing: grace")
            .file(FILE, 1 << 20, Duration.ofMinutes(1)).bornAgo(Duration.ofMinutes(1))
            .torchManager(7001, 1000, 1, Duration.ofMinutes(7), true),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("an NCCL file is not registered with a torch manager: reaped")
            .file("nccl-AbC123", 4096, Duration.ofMinutes(6))
            .torchManager(7001, 1000, 1, Duration.ofMinutes(7), true),
            Verdict.LEAKED, true, "unheld and unchanged for 6m"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void aBatchWaitsOnlyWhileItsOwnersLiveJobMayReceiveIt(FamilyRow row) {
    row.check();
  }
}
