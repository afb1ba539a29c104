package org.shmguard.policy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.shmguard.policy.Advice.Action;

/**
 * Decides what a launcher should set before an NCCL job starts, from the room in its shm mount,
 * the job's shape and the host's driver. Pure: no I/O, no clock; every figure comes from
 * {@link NcclFacts}. The rules, in order:
 * <ol>
 *   <li>everything NCCL may put in /dev/shm fits (SHM buffers, proxy ops pools, NVLS scratch): nothing;</li>
 *   <li>the SHM buffers do not fit, the rest does, and NCCL and the driver can keep the buffers in
 *       cuMem host memory without risk: {@code NCCL_CUMEM_HOST_ENABLE=1};</li>
 *   <li>otherwise, if the rest fits: {@code NCCL_SHM_DISABLE=1};</li>
 *   <li>not even the proxy pools fit: the tmpfs must grow, by the shortfall (with the variable of
 *       rule 2 or 3 still set, since it lowers the need).</li>
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
    CudaVersion cuda = host.driver() == null ? null : host.driver().cuda();

    long poolEach = nccl != null ? NcclFacts.proxyPoolBytes(nccl) : NcclFacts.largestProxyPoolBytes();
    long pools = poolEach == 0 ? 0 : ranks * (poolEach + NcclFacts.REFCOUNT_BYTES);
    long nvls = nccl != null ? NcclFacts.nvlsScratchBytes(ranks, nccl) : (long) ranks * NcclFacts.NVLS_SCRATCH_BYTES_PER_RANK;
    long shm = NcclFacts.shmTransportBytes(ranks, NcclFacts.DEFAULT_CHANNELS);
    long fixed = pools + nvls;
    long full = shm + fixed;
    long free = mount.freeBytes();
    if (nccl == null) {
      assumed.add("NCCL version unknown: assumed the largest proxy ops pool known ("
          + NcclFacts.largestProxyPoolBytes() + " bytes per rank, 2.28 and later) and no cuMem host memory");
    }
    if (host.driver() == null) {
      assumed.add("NVIDIA driver unknown: cuMem host memory not counted on");
    }
    assumed.add("SHM transport on a ring of " + NcclFacts.DEFAULT_CHANNELS + " channels with default buffer sizes");

    Map<String, Long> n = new LinkedHashMap<>();
    n.put("sizeBytes", mount.sizeBytes());
    n.put("freeBytes", free);
    n.put("localRanks", (long) ranks);
    n.put("shmBuffersBytes", shm);
    n.put("proxyPoolsBytes", pools);
    n.put("nvlsScratchBytes", nvls);
    n.put("reclaimableBytes", mount.reclaimableBytes());

    String job = ranks + " local rank" + (ranks == 1 ? "" : "s") + (nccl != null ? " of NCCL " + nccl : "");
    String room = mib(free) + " free of " + mib(mount.sizeBytes()) + " on " + mount.name();
    String reclaim = mount.reclaimableBytes() > 0
        ? "; " + mib(mount.reclaimableBytes()) + " of it is held by leaked segments that 'shmguard clean' frees" : "";

    String why = cumemHostAdvisable(nccl, cuda);
    String cumem = "NCCL " + nccl + " with driver " + host.driver() + " (CUDA " + cuda + ")"
        + (cumemHostByDefault(nccl, cuda) ? " keeps the SHM buffers in cuMem host memory by default" : " can keep the SHM buffers in cuMem host memory");
    if (why == null) {
      assumed.add("in a container, cuMem host memory needs the SYS_NICE capability; without it NCCL "
          + NcclFacts.CUMEM_HOST_FALLBACK_SINCE + "+ falls back to /dev/shm");
    }
    if (full <= free) {
      n.put("neededBytes", full);
      return new Advice(Action.NONE, mount, Map.of(), job + " need at most " + mib(full) + " in /dev/shm (SHM buffers "
          + mib(shm) + ", proxy pools " + mib(pools) + "): " + room + ", it fits", n, assumed);
    }
    String shortBy = job + " need " + mib(full) + " in /dev/shm (SHM buffers " + mib(shm) + ", proxy pools " + mib(pools)
        + ", NVLS scratch " + mib(nvls) + "), " + room + reclaim;
    n.put("neededBytes", fixed);
    if (fixed <= free) {
      if (why == null) {
        return new Advice(Action.CUMEM_HOST, mount, Map.of("NCCL_CUMEM_HOST_ENABLE", "1"), shortBy + "; " + cumem
            + ", leaving " + mib(fixed) + " in /dev/shm", n, assumed);
      }
      return new Advice(Action.SHM_DISABLE, mount, Map.of("NCCL_SHM_DISABLE", "1"), shortBy
          + "; with the SHM transport off only " + mib(fixed) + " stays, at the cost of slower intra-node traffic ("
          + why + ")", n, assumed);
    }
    n.put("growBytes", fixed - free);
    n.put("growBytesUnchanged", full - free);
    Map<String, String> env = why == null ? Map.of("NCCL_CUMEM_HOST_ENABLE", "1") : Map.of("NCCL_SHM_DISABLE", "1");
    String least = why == null ? "with the SHM buffers in cuMem host memory" : "with the SHM transport off";
    return new Advice(Action.GROW, mount, env, shortBy + "; even " + least + " " + mib(fixed)
        + " stays, which does not fit: the tmpfs must grow by at least " + mib(fixed - free) + " (by "
        + mib(full - free) + " to run with nothing set)", n, assumed);
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

  static String mib(long bytes) {
    if (bytes < (1L << 20)) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / 1048576.0);
  }
}
