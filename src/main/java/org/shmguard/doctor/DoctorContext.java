package org.shmguard.doctor;

import java.util.Objects;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.gpu.NcclVersion;

/**
 * Everything the checks read: the engine's judgement of the host (mounts, segments, holders,
 * verdicts, hidden usage), the host's GPUs, and the probes that reach outside it (NVML, the
 * daemon's socket). Tests build one from a fixture tree and fixed probes.
 *
 * @param ranks local ranks to plan /dev/shm for, as --ranks gave them; null to count GPUs
 * @param ncclVersion the NCCL release to size for; {@link #NEWEST_KNOWN} unless --nccl-version said
 * @param ncclVersionGiven whether the user named the release (else the largest sizes are assumed)
 */
public record DoctorContext(
    HostPaths paths,
    Judgement judgement,
    GpuHost gpus,
    NamespaceDevices.Lookup devices,
    Integer ranks,
    NcclVersion ncclVersion,
    boolean ncclVersionGiven,
    GpuMemoryReader gpuMemory,
    DaemonProbe daemon,
    AdviceSource advice) {

  /** The release whose /dev/shm sizes are the largest NcclFacts knows. */
  public static final NcclVersion NEWEST_KNOWN = org.shmguard.gpu.NcclFacts.LARGEST_KNOWN;

  public DoctorContext {
    Objects.requireNonNull(paths, "paths");
    Objects.requireNonNull(judgement, "judgement");
    Objects.requireNonNull(gpus, "gpus");
    Objects.requireNonNull(devices, "devices");
    if (ranks != null && (ranks < 1 || ranks > 1024)) {
      throw new IllegalArgumentException("ranks must be between 1 and 1024, not " + ranks);
    }
    Objects.requireNonNull(ncclVersion, "ncclVersion");
    Objects.requireNonNull(gpuMemory, "gpuMemory");
    Objects.requireNonNull(daemon, "daemon");
    Objects.requireNonNull(advice, "advice");
  }
}
