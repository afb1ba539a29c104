package org.shmguard.policy.family;

import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.shmguard.policy.Verdict;

/** The table every family whose files are held for their whole useful life shares; each family's test runs it on its own name. */
final class HeldForLifeRows {
  private HeldForLifeRows() {}

  static Stream<FamilyRow> table(String family, String file) {
    return Stream.of(
        row(FamilyCase.of(file + " held by a live process").file(file, 1 << 20, Duration.ofHours(1)).heldBy(300),
            Verdict.HELD, false, "held by pid 300"),
        row(FamilyCase.of(file + " unheld and young").file(file, 1 << 20, Duration.ofMinutes(1)),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of(file + " every holder exited: leaked at once, reported").file(file, 1 << 20,
            Duration.ofSeconds(5)).heldBeforeByExited(300).heldBeforeByExited(301),
            Verdict.LEAKED, false, "every process that held it has exited"),
        row(FamilyCase.of(file + " a holder let go but lives: grace").file(file, 1 << 20, Duration.ofSeconds(5))
            .heldBeforeByLiving(300).heldBeforeByExited(301), Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of(file + " past grace: leaked, reported, not reaped").file(file, 1 << 20, Duration.ofMinutes(11)),
            Verdict.LEAKED, false, "reported, not reaped: families." + family + ".reap is off"),
        row(FamilyCase.of(file + " every holder exited, reap on: reaped").file(file, 1 << 20, Duration.ofSeconds(5))
            .heldBeforeByExited(300).configured(family, true, Duration.ofMinutes(10)),
            Verdict.LEAKED, true, "every process that held it has exited"),
        row(FamilyCase.of(file + " 0 bytes is no failed creation").file(file, 0, Duration.ofSeconds(5)),
            Verdict.GRACE, false, "grace is 10m"));
  }
}
