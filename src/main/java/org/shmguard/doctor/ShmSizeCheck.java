package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.shmguard.text.Bytes;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.MountReport;
import org.shmguard.host.ProcessConfinement;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclFootprint;

/**
 * Is each shm mount (the host's /dev/shm, every container's and pod's) big enough, and free
 * enough, for the NCCL jobs that can run there? Sizes come from {@link NcclFacts} for as many
 * local ranks as GPUs the mount's users see: 4 ranks need about 74 MiB for the SHM transport
 * alone, more than Docker's 64 MB default (SCENARIOS.md #1-#3).
 */
final class ShmSizeCheck implements Check {
  /** Ranks assumed where no GPU can be seen: a full 8-GPU node. */
  static final int DEFAULT_RANKS = 8;

  @Override
  public String name() {
    return "shm-size";
  }

  /** How many ranks to plan for, and why; {@code assumed} caps the severity at a warning. */
  record Ranks(int count, boolean assumed, String why) {}

  @Override
  public List<Finding> run(DoctorContext ctx) {
    List<Finding> out = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    for (MountReport r : ctx.judgement().mounts()) {
      ShmMount m = r.mount();
      if (m.usage() == null) {
        continue; // the observer could not measure it and said so
      }
      Ranks ranks = ranksFor(m, ctx);
      if (ranks == null) {
        skipped.add(m.displayName());
        continue;
      }
      out.addAll(judge(m, ranks, ShmNeed.of(ranks.count(), ctx.ncclVersion()), ctx));
    }
    if (!skipped.isEmpty()) {
      out.add(Finding.of("shm-not-checked", Severity.INFO, null,
          skipped.size() + " container mount(s) not sized: their containers see no GPU while this host has "
              + ctx.gpus().count(),
          List.of("no /dev/nvidiaN in their /dev: " + String.join(", ", skipped)),
          List.of("pass --ranks N to size them anyway")));
    }
    return out;
  }

  static Ranks ranksFor(ShmMount m, DoctorContext ctx) {
    if (ctx.ranks() != null) {
      return new Ranks(ctx.ranks(), false, "planning for " + ctx.ranks() + " local ranks (--ranks)");
    }
    GpuHost gpus = ctx.gpus();
    if (m.origin().ofContainer() && !m.pids().isEmpty()) {
      NamespaceDevices d = ctx.devices().of(m.pids().get(0));
      if (d.readable() && d.gpuCount() > 0) {
        return new Ranks(d.gpuCount(), false, "the container sees " + d.gpuCount() + " GPU(s): "
            + d.gpuMinors().stream().map(n -> "/dev/nvidia" + n).reduce((a, b) -> a + ", " + b).orElse(""));
      }
      if (d.readable() && gpus.hasGpu()) {
        return null;
      }
    }
    if (gpus.hasGpu()) {
      return new Ranks(gpus.count(), false, "this host has " + gpus.count() + " GPU(s) in /proc/driver/nvidia/gpus");
    }
    return new Ranks(DEFAULT_RANKS, true, "no NVIDIA GPU found in /proc/driver/nvidia/gpus: assuming "
        + DEFAULT_RANKS + " local ranks, a full 8-GPU node (pass --ranks N for your jobs)");
  }

  private static List<Finding> judge(ShmMount m, Ranks ranks, ShmNeed need, DoctorContext ctx) {
    ShmMount.Usage u = m.usage();
    long leaked = leakedBytes(m, ctx);
    List<String> evidence = new ArrayList<>();
    evidence.add(m.displayName() + ": tmpfs of " + Bytes.human(u.sizeBytes()) + " (" + group(u.sizeBytes())
        + " bytes), " + Bytes.human(u.usedBytes()) + " used, " + Bytes.human(u.freeBytes()) + " free (statvfs)");
    evidence.add(ranks.why());
    evidence.add(needLine(need, ctx));
    String confinement = confinementLine(m, ctx);
    if (confinement != null) {
      evidence.add(confinement);
    }
    if (leaked > 0) {
      evidence.add(Bytes.human(leaked) + " of it is held by leaked segments (see leaked-segments)");
    }
    String name = m.displayName();
    List<Finding> out = new ArrayList<>();
    if (u.sizeBytes() < need.totalBytes()) {
      boolean transportFits = u.sizeBytes() >= need.transportBytes();
      String summary = transportFits
          ? name + " is " + Bytes.human(u.sizeBytes()) + ": room for the SHM transport of " + need.ranks()
              + " ranks but not for the proxy ops pools a multi-node job adds (" + Bytes.human(need.totalBytes()) + " in all)"
          : name + " is " + Bytes.human(u.sizeBytes()) + "; " + need.ranks() + " NCCL ranks need at least "
              + Bytes.human(need.transportBytes()) + " for the SHM transport alone: NCCL fails at init with"
              + " \"failed to extend /dev/shm/nccl-XXXXXX to " + (NcclFacts.SHM_RECV_BYTES + NcclFacts.REFCOUNT_BYTES)
              + " bytes\" (\"unhandled system error\")";
      List<String> fix = new ArrayList<>(ShmFix.grow(m, need.recommendedGib(), OwnContainer.runtime(ctx.paths())));
      out.add(finish("shm-too-small", transportFits ? Severity.WARNING : Severity.ERROR, ranks, name, summary, evidence, fix));
    }
    // Full only matters where the size itself would do: otherwise shm-too-small already says it.
    boolean transportShort = need.transportBytes() > 0 && u.freeBytes() < need.transportBytes();
    if (u.sizeBytes() >= need.transportBytes() && (transportShort || u.sizeBytes() >= need.totalBytes() && u.freeBytes() < need.totalBytes())) {
      String summary = transportShort
          ? name + " has only " + Bytes.human(u.freeBytes()) + " free of " + Bytes.human(u.sizeBytes()) + ": a job of "
              + need.ranks() + " ranks starting now needs " + Bytes.human(need.transportBytes())
              + " and would fail with \"failed to extend /dev/shm/nccl-XXXXXX\""
          : name + " has " + Bytes.human(u.freeBytes()) + " free of " + Bytes.human(u.sizeBytes()) + ": less than the "
              + Bytes.human(need.totalBytes()) + " a job of " + need.ranks() + " ranks uses";
      List<String> fix = new ArrayList<>();
      fullFix(fix, leaked, m, need, OwnContainer.runtime(ctx.paths()));
      out.add(finish("shm-full", transportShort ? Severity.ERROR : Severity.WARNING, ranks, name, summary, evidence, fix));
    }
    return out;
  }

  private static Finding finish(String id, Severity sev, Ranks ranks, String name, String summary, List<String> evidence,
      List<String> fix) {
    fix.add("meanwhile, NCCL_SHM_DISABLE=1 in the job's environment lowers its /dev/shm use (slower intra-node"
        + " traffic; GPUs without P2P then talk over the network transport, whose proxy ops pools are files too)");
    return Finding.of(id, ranks.assumed() ? sev.atMost(Severity.WARNING) : sev, name, summary, evidence, fix);
  }

  private static void fullFix(List<String> fix, long leaked, ShmMount m, ShmNeed need, String ownRuntime) {
    if (leaked > 0) {
      fix.add("shmguard clean   (frees the " + Bytes.human(leaked) + " that leaked segments hold)");
    }
    fix.add("see who holds the rest: shmguard scan");
    fix.addAll(ShmFix.grow(m, need.recommendedGib(), ownRuntime));
  }

  private static String needLine(ShmNeed need, DoctorContext ctx) {
    String release = ctx.ncclVersionGiven() ? "NCCL " + ctx.ncclVersion()
        : "NCCL " + ctx.ncclVersion().major() + "." + ctx.ncclVersion().minor() + "+ (the largest sizes known; --nccl-version to change)";
    NcclFootprint one = need.oneNode();
    NcclFootprint many = need.severalNodes();
    return release + ", " + need.ranks() + " ranks without P2P: on one node SHM transport " + group(one.shmBuffersBytes())
        + " bytes (" + need.ranks() + " ranks x " + NcclFacts.DEFAULT_CHANNELS + " channels x ("
        + group(NcclFacts.SHM_RECV_BYTES + NcclFacts.refcountBytes(need.version())) + " + "
        + group(NcclFacts.SHM_SEND_BYTES + NcclFacts.refcountBytes(need.version())) + "), a ring), no proxy ops pool; across nodes " + group(many.shmBuffersBytes()) + " bytes of SHM transport"
        + " + proxy ops pools " + group(many.proxyPoolsBytes()) + " bytes (" + many.pools() + " x " + group(many.poolFileBytes())
        + ") = " + Bytes.human(many.totalBytes()) + "; sized for " + Bytes.human(need.totalBytes());
  }

  /**
   * What the seccomp filter and bounding set of a container's process say about cuMem host memory
   * there; null where that cannot be read.
   */
  static String confinementLine(ShmMount m, DoctorContext ctx) {
    if (!m.origin().ofContainer() || m.pids().isEmpty()) {
      return null;
    }
    int pid = m.pids().get(0);
    ProcessConfinement c = ProcessConfinement.read(ctx.paths().proc(Integer.toString(pid), "status"));
    if (c == null) {
      return null;
    }
    return "pid " + pid + " there has " + c.describe() + (c.numaPolicyAllowed()
        ? ": NCCL " + NcclFacts.CUMEM_HOST_AUTO_SINCE + "+ with a CUDA " + NcclFacts.CUMEM_HOST_AUTO_DRIVER
            + "+ driver keeps the SHM buffers between processes in cuMem host memory, off this /dev/shm"
        : ": cuMem host memory cannot work here, so the SHM buffers stay in this /dev/shm (NCCL "
            + NcclFacts.CUMEM_HOST_FALLBACK_SINCE + "+ falls back to files; " + NcclFacts.CUMEM_HOST_AUTO_SINCE
            + " to 2.26.2 fail at init unless NCCL_CUMEM_HOST_ENABLE=0); docker run --cap-add SYS_NICE allows it");
  }

  private static long leakedBytes(ShmMount m, DoctorContext ctx) {
    long sum = 0;
    for (Assessment a : ctx.judgement().segments()) {
      if (a.verdict().reapable() && a.segment().mountDev().equals(m.dev())) {
        sum += a.segment().allocatedBytes();
      }
    }
    return sum;
  }

  static String group(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }
}
