package org.shmguard.policy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.shmguard.gpu.CudaVersion;
import org.shmguard.gpu.HostGpus;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclFootprint;
import org.shmguard.gpu.NcclJob;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.policy.Advice.Action;

/**
 * Decides what a launcher should set before an NCCL job starts, from the room in its shm mount,
 * the job's shape and the host's driver. Pure: no I/O, no clock; every figure is an {@link
 * NcclFootprint}, sized as NCCL's own code sizes it. What the request leaves open is resolved
 * to whatever needs more /dev/shm, and said. The rules, in order:
 * <ol>
 *   <li>what NCCL will put in /dev/shm as the job stands fits: nothing;</li>
 *   <li>it does not, and with the SHM buffers in cuMem host memory it would, and NCCL and the driver
 *       can do that without risk: {@code NCCL_CUMEM_HOST_ENABLE=1};</li>
 *   <li>otherwise, if it would with the SHM transport off (pairs without P2P then take the network
 *       transport, and its proxy ops pools): {@code NCCL_SHM_DISABLE=1};</li>
 *   <li>otherwise the tmpfs must grow, by the shortfall of the smallest of these (with its variable set).</li>
 * </ol>
 *
 * <pre>{@code
 * Advice a = new AdviceEngine(8).advise(space, new JobShape(4, NcclVersion.parse("2.21.5")), HostGpus.unknown());
 * }</pre>
 */
public final class AdviceEngine {
  /** Ranks assumed when neither the request nor the host says: a common 8-GPU server, the worst usual case. */
  public static final int DEFAULT_LOCAL_RANKS = 8;
  /** Variables the engine may ever advise; launchers export nothing else. */
  public static final List<String> ADVISED_VARIABLES = List.of("NCCL_CUMEM_HOST_ENABLE", "NCCL_SHM_DISABLE");

  private final int defaultLocalRanks;

  public AdviceEngine(int defaultLocalRanks) {
    if (defaultLocalRanks < 1 || defaultLocalRanks > JobShape.MAX_RANKS) {
      throw new IllegalArgumentException("default local ranks must be from 1 to " + JobShape.MAX_RANKS);
    }
    this.defaultLocalRanks = defaultLocalRanks;
  }

  public Advice advise(MountSpace mount, JobShape shape, HostGpus host) {
    List<String> assumed = new ArrayList<>();
    int ranks = ranks(shape, host, assumed);
    NcclVersion nccl = shape.nccl();
    NcclVersion sized = nccl != null ? nccl : NcclFacts.LARGEST_KNOWN;
    CudaVersion cuda = host.driver() == null ? null : host.driver().cuda();
    if (nccl == null) {
      assumed.add("NCCL version unknown: sized with the largest figures known (NCCL " + sized + ": proxy ops pool of "
          + NcclFacts.proxyPoolBytes(sized) + " bytes) and no cuMem host memory");
    }
    if (host.driver() == null) {
      assumed.add("NVIDIA driver unknown: cuMem host memory not counted on");
    }
    int procs = processes(shape, ranks, assumed);
    boolean cuMemNow = cuMemHostAsIs(nccl, cuda, shape.numa(), assumed);
    List<NcclJob> jobs = candidates(shape, ranks, sized, procs);

    NcclFootprint asIs = worst(jobs, j -> j.withCuMemHost(cuMemNow));
    describeResolution(shape, asIs.job(), assumed);
    assumed.add("SHM transport on a ring of " + NcclFacts.DEFAULT_CHANNELS + " channels with default buffer sizes,"
        + " one communicator");
    String why = cumemHostAdvisable(nccl, cuda);
    if (why == null && Boolean.FALSE.equals(shape.numa())) {
      why = "this container's seccomp filter blocks the NUMA calls cuMem host memory needs (no CAP_SYS_NICE)";
    }
    if (why == null && shape.numa() == null) {
      assumed.add("in a container, cuMem host memory needs the SYS_NICE capability; without it NCCL "
          + NcclFacts.CUMEM_HOST_FALLBACK_SINCE + "+ falls back to /dev/shm");
    }
    NcclFootprint cuMem = why == null ? worst(jobs, j -> j.withCuMemHost(true)) : null;
    NcclFootprint shmOff = worst(jobs, j -> j.withShmDisabled(true));

    long free = mount.freeBytes();
    Map<String, Long> n = new LinkedHashMap<>();
    n.put("sizeBytes", mount.sizeBytes());
    n.put("freeBytes", free);
    n.put("localRanks", (long) ranks);
    n.put("shmBuffersBytes", asIs.shmBuffersBytes());
    n.put("shmSegmentPairs", asIs.shmSegmentPairs());
    n.put("proxyPoolsBytes", asIs.proxyPoolsBytes());
    n.put("proxyPools", (long) asIs.pools());
    n.put("nvlsScratchBytes", asIs.nvlsBytes());
    n.put("reclaimableBytes", mount.reclaimableBytes());

    String job = ranks + " local rank" + (ranks == 1 ? "" : "s") + (nccl != null ? " of NCCL " + nccl : "");
    String room = mib(free) + " free of " + mib(mount.sizeBytes()) + " on " + mount.name();
    if (asIs.totalBytes() <= free) {
      n.put("neededBytes", asIs.totalBytes());
      return new Advice(Action.NONE, mount, Map.of(), job + " need at most " + mib(asIs.totalBytes()) + " in /dev/shm ("
          + breakdown(asIs) + "): " + room + ", it fits", n, assumed);
    }
    String reclaim = mount.reclaimableBytes() > 0
        ? "; " + mib(mount.reclaimableBytes()) + " of it is held by leaked segments that 'shmguard clean' frees" : "";
    String shortBy = job + " need " + mib(asIs.totalBytes()) + " in /dev/shm (" + breakdown(asIs) + "), " + room + reclaim;
    if (cuMem != null && cuMem.totalBytes() <= free) {
      n.put("neededBytes", cuMem.totalBytes());
      String cumem = "NCCL " + nccl + " with driver " + host.driver() + " (CUDA " + cuda + ")"
          + (cumemHostByDefault(nccl, cuda) ? " keeps the SHM buffers in cuMem host memory by default" : " can keep the SHM buffers in cuMem host memory");
      return new Advice(Action.CUMEM_HOST, mount, Map.of("NCCL_CUMEM_HOST_ENABLE", "1"), shortBy + "; " + cumem
          + ", leaving " + mib(cuMem.totalBytes()) + " in /dev/shm (" + breakdown(cuMem) + ")", n, assumed);
    }
    if (shmOff.totalBytes() < asIs.totalBytes() && shmOff.totalBytes() <= free) {
      n.put("neededBytes", shmOff.totalBytes());
      return new Advice(Action.SHM_DISABLE, mount, Map.of("NCCL_SHM_DISABLE", "1"), shortBy
          + "; with the SHM transport off only " + mib(shmOff.totalBytes()) + " stays (" + breakdown(shmOff)
          + "), at the cost of slower intra-node traffic" + (why == null ? "" : " (" + why + ")"), n, assumed);
    }
    NcclFootprint least = asIs;
    Map<String, String> env = Map.of();
    String with = "as the job stands";
    if (cuMem != null && cuMem.totalBytes() < least.totalBytes() && cuMem.totalBytes() <= shmOff.totalBytes()) {
      least = cuMem;
      env = Map.of("NCCL_CUMEM_HOST_ENABLE", "1");
      with = "even with the SHM buffers in cuMem host memory";
    } else if (shmOff.totalBytes() < least.totalBytes()) {
      least = shmOff;
      env = Map.of("NCCL_SHM_DISABLE", "1");
      with = "even with the SHM transport off";
    }
    n.put("neededBytes", least.totalBytes());
    n.put("growBytes", least.totalBytes() - free);
    n.put("growBytesUnchanged", asIs.totalBytes() - free);
    return new Advice(Action.GROW, mount, env, shortBy + "; " + with + " " + mib(least.totalBytes()) + " stays ("
        + breakdown(least) + "), which does not fit: the tmpfs must grow by at least " + mib(least.totalBytes() - free)
        + " (by " + mib(asIs.totalBytes() - free) + " to run with nothing set)", n, assumed);
  }

  /** The jobs the shape allows: each unknown of nodes and P2P taken both ways. */
  private static List<NcclJob> candidates(JobShape shape, int ranks, NcclVersion nccl, int procs) {
    List<NcclJob> out = new ArrayList<>();
    for (boolean multi : shape.nodes() == null ? List.of(false, true) : List.of(shape.nodes() > 1)) {
      for (boolean p2p : shape.p2p() == null ? List.of(false, true) : List.of(shape.p2p())) {
        out.add(new NcclJob(ranks, nccl, multi, p2p, procs, false, false));
      }
    }
    return out;
  }

  /** The largest footprint among the candidates, each changed by {@code option}: every figure a real configuration's. */
  private static NcclFootprint worst(List<NcclJob> jobs, UnaryOperator<NcclJob> option) {
    NcclFootprint worst = null;
    for (NcclJob j : jobs) {
      NcclFootprint f = NcclFootprint.of(option.apply(j));
      if (worst == null || f.totalBytes() > worst.totalBytes()) {
        worst = f;
      }
    }
    return worst;
  }

  private static void describeResolution(JobShape shape, NcclJob chosen, List<String> assumed) {
    if (shape.nodes() == null) {
      assumed.add("nodes not given: sized as " + (chosen.multiNode() ? "a multi-node job (network transport, proxy ops pools)"
          : "a single-node job") + ", whichever of one node and several needs more");
    }
    if (shape.p2p() == null) {
      assumed.add("P2P between the job's GPUs not given: sized " + (chosen.p2p() ? "with" : "without")
          + " it, whichever needs more");
    }
  }

  private int ranks(JobShape shape, HostGpus host, List<String> assumed) {
    if (shape.localRanks() != null) {
      return shape.localRanks();
    }
    if (host.gpuCount() > 0) {
      assumed.add("local ranks not given: assumed one per GPU of this host (" + host.gpuCount() + ")");
      return host.gpuCount();
    }
    assumed.add("local ranks not given and no GPUs listed: assumed the default of " + defaultLocalRanks);
    return defaultLocalRanks;
  }

  private static int processes(JobShape shape, int ranks, List<String> assumed) {
    if (shape.processes() == null) {
      if (ranks > 1) {
        assumed.add("processes not given: assumed one per rank, as torchrun, mpirun and srun start them");
      }
      return ranks;
    }
    if (shape.processes() > ranks) {
      assumed.add("more processes (" + shape.processes() + ") than local ranks: one per rank");
      return ranks;
    }
    return shape.processes();
  }

  /**
   * Whether NCCL, left alone, keeps the cross-process SHM buffers in cuMem host memory: 2.24.3+ on
   * a CUDA 12.6+ driver, unless the container blocks the NUMA calls (2.26.3+ then falls back to
   * files; earlier releases fail at init). Not known whether it does: counted as files.
   */
  private static boolean cuMemHostAsIs(NcclVersion nccl, CudaVersion cuda, Boolean numa, List<String> assumed) {
    if (!cumemHostByDefault(nccl, cuda)) {
      return false;
    }
    if (Boolean.TRUE.equals(numa)) {
      return true;
    }
    if (numa == null) {
      assumed.add("whether the job's container allows the NUMA calls of cuMem host memory is unknown:"
          + " SHM buffers counted as /dev/shm files");
    } else if (nccl.compareTo(NcclFacts.CUMEM_HOST_FALLBACK_SINCE) < 0) {
      assumed.add("NCCL " + nccl + " turns cuMem host memory on by itself and, in a container that blocks its NUMA"
          + " calls, fails at init (before " + NcclFacts.CUMEM_HOST_FALLBACK_SINCE + "): set NCCL_CUMEM_HOST_ENABLE=0"
          + " or give the container SYS_NICE");
    }
    return false;
  }

  /** NCCL 2.24.3+ turns cuMem host memory on by itself with a CUDA 12.6+ driver. */
  static boolean cumemHostByDefault(NcclVersion nccl, CudaVersion cuda) {
    return nccl != null && cuda != null && nccl.compareTo(NcclFacts.CUMEM_HOST_AUTO_SINCE) >= 0
        && cuda.atLeast(NcclFacts.CUMEM_HOST_AUTO_DRIVER);
  }

  /**
   * Null when NCCL_CUMEM_HOST_ENABLE=1 is safe to advise; else why not, in words. Safe: NCCL and
   * driver support it, and either NCCL turns it on by itself anyway, or NCCL falls back when it
   * fails, or the driver is new enough not to fail without P2P.
   */
  static String cumemHostAdvisable(NcclVersion nccl, CudaVersion cuda) {
    if (nccl == null) {
      return "NCCL_CUMEM_HOST_ENABLE needs NCCL " + NcclFacts.CUMEM_HOST_SINCE + "+ and the version is unknown";
    }
    if (nccl.compareTo(NcclFacts.CUMEM_HOST_SINCE) < 0) {
      return "NCCL_CUMEM_HOST_ENABLE needs NCCL " + NcclFacts.CUMEM_HOST_SINCE + "+";
    }
    if (cuda == null) {
      return "NCCL_CUMEM_HOST_ENABLE needs a CUDA " + NcclFacts.CUMEM_HOST_AUTO_DRIVER + "+ driver and the driver is unknown";
    }
    if (!cuda.atLeast(NcclFacts.CUMEM_HOST_AUTO_DRIVER)) {
      return "NCCL_CUMEM_HOST_ENABLE needs a CUDA " + NcclFacts.CUMEM_HOST_AUTO_DRIVER + "+ driver, this one serves CUDA " + cuda;
    }
    if (!cumemHostByDefault(nccl, cuda) && nccl.compareTo(NcclFacts.CUMEM_HOST_FALLBACK_SINCE) < 0
        && !cuda.atLeast(NcclFacts.CUMEM_HOST_NO_P2P_SAFE_DRIVER)) {
      return "NCCL_CUMEM_HOST_ENABLE can fail between GPUs without P2P on drivers before CUDA "
          + NcclFacts.CUMEM_HOST_NO_P2P_SAFE_DRIVER + " (NVIDIA/nccl #1838), and NCCL before "
          + NcclFacts.CUMEM_HOST_FALLBACK_SINCE + " does not fall back";
    }
    return null;
  }

  /** "SHM buffers 73.6 MiB in 8 segment pairs; 4 ranks on one node, no P2P": the parts that are not 0, and the job. */
  static String breakdown(NcclFootprint f) {
    List<String> parts = new ArrayList<>();
    if (f.shmBuffersBytes() > 0) {
      parts.add("SHM buffers " + mib(f.shmBuffersBytes()) + " in " + f.shmSegmentPairs() + " segment pairs");
    }
    if (f.pools() > 0) {
      parts.add("proxy ops pools " + mib(f.proxyPoolsBytes()) + " (" + f.pools() + " x " + f.poolFileBytes() + " bytes)");
    }
    if (f.nvlsBytes() > 0) {
      parts.add("NVLS segment " + mib(f.nvlsBytes()));
    }
    return (parts.isEmpty() ? "nothing" : String.join(", ", parts)) + "; " + f.job().describe();
  }

  static String mib(long bytes) {
    if (bytes < (1L << 20)) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
  }
}
