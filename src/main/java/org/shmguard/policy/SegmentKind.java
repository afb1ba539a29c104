package org.shmguard.policy;

import java.util.Map;

/**
 * Guesses what made a file from its name and size, using the sizes NCCL uses (see NCCL-FACTS.md):
 * the SHM transport's receive and send buffers, the proxy ops pool of each release, the P2P
 * copy-engine segment. A guess, for people; no decision rests on it.
 */
public final class SegmentKind {
  /** File sizes (data + the 4-byte reference count) of NCCL's segments, from {@link NcclFacts}. */
  private static final Map<Long, String> NCCL_SIZES = Map.ofEntries(
      Map.entry(NcclFacts.SHM_RECV_BYTES + NcclFacts.REFCOUNT_BYTES, "nccl-shm-recv"),
      Map.entry(NcclFacts.SHM_SEND_BYTES + NcclFacts.REFCOUNT_BYTES, "nccl-shm-send"),
      Map.entry(NcclFacts.P2P_CE_BYTES + NcclFacts.REFCOUNT_BYTES, "nccl-p2p-ce"),
      pool(2, 12, "2.12-2.19"),
      pool(2, 20, "2.20"),
      pool(2, 21, "2.21-2.22"),
      pool(2, 23, "2.23"),
      pool(2, 24, "2.24"),
      pool(2, 25, "2.25"),
      pool(2, 26, "2.26-2.27"),
      pool(2, 28, "2.28-2.30"));

  private static Map.Entry<Long, String> pool(int major, int minor, String releases) {
    long bytes = NcclFacts.proxyPoolBytes(NcclVersion.of(major, minor, 0)) + NcclFacts.REFCOUNT_BYTES;
    return Map.entry(bytes, "nccl-proxy-pool (" + releases + ")");
  }

  private SegmentKind() {}

  /** True for the names NCCL itself gives its files, in either naming scheme. */
  public static boolean isNccl(String name) {
    return name.startsWith("nccl-");
  }

  public static String guess(String name, long sizeBytes) {
    if (name.startsWith("nccl-shm-send-")) {
      return "nccl-shm-send (<2.12)";
    }
    if (name.startsWith("nccl-shm-recv-")) {
      return "nccl-shm-recv (<2.12)";
    }
    if (isNccl(name)) {
      if (sizeBytes == 0) {
        return "nccl-empty";
      }
      return NCCL_SIZES.getOrDefault(sizeBytes, "nccl");
    }
    if (name.startsWith("torch_")) {
      return "pytorch";
    }
    if (name.startsWith("psm_")) {
      return "python-shared-memory";
    }
    if (name.startsWith("sem.")) {
      return "semaphore";
    }
    if (name.startsWith("vader_segment.") || name.startsWith("sm_segment.")) {
      return "open-mpi";
    }
    if (name.startsWith("ucx_shm_posix_")) {
      return "ucx";
    }
    if (name.startsWith("psm2_shm.") || name.startsWith("psm3_shm.")) {
      return "psm";
    }
    if (name.startsWith("cuda.shm.")) {
      return "cuda-mps";
    }
    return "other";
  }
}
