package org.shmguard.doctor;

import java.util.List;

/**
 * What one doctor run found: every check with its outcome, and every finding, most severe first.
 * This is also the shape of {@code doctor --json}: add fields, never rename them.
 *
 * @param checks each check run, in order, with its outcome: "ok", "found" or "failed"
 */
public record DoctorReport(String takenAt, List<CheckRun> checks, List<Finding> findings) {
  public DoctorReport {
    checks = List.copyOf(checks);
    findings = List.copyOf(findings);
  }

  /** One check's outcome and how many findings it made. */
  public record CheckRun(String name, String outcome, int findings) {}

  /** True when any finding is an error or a warning: the doctor then exits 1. */
  public boolean problem() {
    return findings.stream().anyMatch(f -> f.severity().isProblem());
  }

  public long count(Severity s) {
    return findings.stream().filter(f -> f.severity() == s).count();
  }
}
