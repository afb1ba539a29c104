package org.shmguard.cli;

import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.doctor.AdviceSource;
import org.shmguard.doctor.Doctor;
import org.shmguard.doctor.DoctorContext;
import org.shmguard.doctor.DoctorReport;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.view.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "doctor", mixinStandardHelpOptions = true,
    description = "Diagnose the known NCCL shared-memory failures on this host and in its containers: shm mounts too small"
        + " or too full for the GPUs' jobs, leaked segments and failed creations, hidden usage, logind's RemoveIPC,"
        + " GPU memory headroom for NVLS, the cross-container cuMem import bug, and the daemon. Changes nothing.",
    footer = {"", "Exit status: 0 nothing wrong, 1 an error or warning found, 2 usage, 78 bad configuration."})
final class DoctorCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--json", description = "Print JSON for programs: findings[].{id,severity,subject,summary,evidence,fix}.")
  boolean json;

  @Option(names = "--ranks", paramLabel = "N",
      description = "Size every shm mount for jobs of N local ranks (default: the GPUs each mount's users see).")
  Integer ranks;

  @Option(names = "--nccl-version", paramLabel = "VERSION",
      description = "The NCCL release the jobs use, e.g. 2.21.5 (default: the largest /dev/shm sizes known, 2.28+).")
  String ncclVersion;

  @Override
  public Integer call() throws Exception {
    NcclVersion version = null;
    if (ncclVersion != null) {
      try {
        version = NcclVersion.parse(ncclVersion);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--nccl-version: " + e.getMessage());
      }
    }
    if (ranks != null && (ranks < 1 || ranks > 1024)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--ranks must be between 1 and 1024, not " + ranks);
    }
    Config config = common.loadConfig();
    DoctorContext ctx = Doctor.observe(config, common.hostPaths(), ranks, version, AdviceSource.forDoctor(config, common.hostPaths(), new org.shmguard.policy.JobShape(ranks, version)));
    DoctorReport report = Doctor.standard().examine(ctx);
    if (json) {
      common.out().println(Json.write(report));
    } else {
      common.out().print(DoctorText.render(report));
    }
    return report.problem() ? Main.EXIT_PROBLEM : Main.EXIT_OK;
  }
}
