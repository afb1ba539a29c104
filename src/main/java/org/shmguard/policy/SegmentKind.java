package org.shmguard.policy;

import java.util.Map;

/**
 * Guesses what made a file from its name and size, using the sizes NCCL uses (see NCCL-FACTS.md):
 * the SHM transport's receive and send buffers, the proxy ops pool of each release, the P2P
 * copy-engine segment. A guess, for people; no decision rests on it.
 */
public final class SegmentKind {
  /** File sizes (data + 4-byte reference count) of NCCL's proxy ops pool, by release. */
  private static final Map<Long, String> NCCL_SIZES = Map.ofEntries(
      Map.entry(9_637_892L, "nccl-shm-recv"),
      Map.entry(4_100L, "nccl-shm-send"),
      Map.entry(8_196L, "nccl-p2p-ce"),
      Map.entry(4_194_660L, "nccl-proxy-pool (2.12-2.19)"),
      Map.entry(5_767_524L, "nccl-proxy-pool (2.20)"),
      Map.entry(7_340_388L, "nccl-proxy-pool (2.21-2.22)"),
      Map.entry(10_486_116L, "nccl-proxy-pool (2.23)"),
      Map.entry(14_156_132L, "nccl-proxy-pool (2.24)"),
      Map.entry(31_850_884L, "nccl-proxy-pool (2.25)"),
      Map.entry(33_030_532L, "nccl-proxy-pool (2.26-2.27)"),
      Map.entry(34_210_180L, "nccl-proxy-pool (2.28-2.30)"));

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
