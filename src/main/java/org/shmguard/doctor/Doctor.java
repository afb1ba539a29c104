package org.shmguard.doctor;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.gpu.NcclVersion;

/**
 * Runs the checks, in priority order, and collects their findings into a report. A check that
 * throws becomes a "check-failed" finding; the others still run.
 *
 * <pre>{@code
 * DoctorContext ctx = Doctor.observe(config, HostPaths.system(), null, null, AdviceSource.NOT_WIRED);
 * DoctorReport report = Doctor.standard().examine(ctx);
 * }</pre>
 */
public final class Doctor {
  private final List<Check> checks;

  public Doctor(List<Check> checks) {
    this.checks = List.copyOf(checks);
  }

  /** Every check, most important first: shm size, leaks, hidden usage, logind, tmpfiles, NVLS, cuMem import, daemon, OCI hook, visibility. */
  public static Doctor standard() {
    return new Doctor(List.of(new ShmSizeCheck(), new LeakCheck(), new HiddenUsageCheck(), new RemoveIpcCheck(),
        new TmpfilesSweepCheck(), new NvlsHeadroomCheck(), new CuMemImportCheck(), new DaemonCheck(), new OciHookCheck(), new VisibilityCheck()));
  }

  /**
   * Observes the host through the engine (nothing is reaped) and gathers what the checks read.
   *
   * @param ranks local ranks to plan for, or null to count GPUs
   * @param nccl the NCCL release to size for, or null for the largest sizes known
   */
  public static DoctorContext observe(Config config, HostPaths paths, Integer ranks, NcclVersion nccl, AdviceSource advice) {
    Judgement j = Engine.create(config, paths, Clock.systemUTC()).judge();
    return new DoctorContext(paths, j, GpuHost.read(paths), NamespaceDevices.Lookup.from(paths), ranks,
        nccl == null ? DoctorContext.NEWEST_KNOWN : nccl, nccl != null, GpuMemoryReader.nvml(), DaemonProbe.at(paths, config.advice().socket()), advice);
  }

  public DoctorReport examine(DoctorContext ctx) {
    List<DoctorReport.CheckRun> runs = new ArrayList<>();
    List<Finding> findings = new ArrayList<>();
    for (Check c : checks) {
      List<Finding> found;
      String outcome;
      try {
        found = c.run(ctx);
        outcome = found.stream().anyMatch(f -> f.severity().isProblem()) ? "found" : "ok";
      } catch (Exception | LinkageError e) {
        found = List.of(Finding.of("check-failed", Severity.WARNING, c.name(),
            "the " + c.name() + " check could not run: " + e, List.of(), List.of("report this as a shmguard bug")));
        outcome = "failed";
      }
      runs.add(new DoctorReport.CheckRun(c.name(), outcome, found.size()));
      findings.addAll(found);
    }
    findings.sort(Comparator.comparing(Finding::severity)); // stable: check order within a severity
    return new DoctorReport(ctx.judgement().snapshot().takenAt().toString(), runs, findings);
  }
}
