package org.shmguard.policy;

import org.shmguard.policy.family.NcclFamily;
import org.shmguard.policy.family.SegmentFamilies;
import org.shmguard.policy.family.SegmentFamily;

/**
 * Guesses what made a file from its name and size: its segment family's label (for NCCL, by the
 * sizes NCCL uses, see NCCL-FACTS.md), or a label by prefix for producers shmguard only names. A
 * guess, for people; no decision rests on it.
 */
public final class SegmentKind {
  private SegmentKind() {}

  /** True for the names NCCL itself gives its files, in either naming scheme. */
  public static boolean isNccl(String name) {
    return SegmentFamilies.standard().of(name) instanceof NcclFamily;
  }

  public static String guess(String name, long sizeBytes) {
    SegmentFamily family = SegmentFamilies.standard().of(name);
    if (family != null) {
      return family.kind(name, sizeBytes);
    }
    // Names outside a family's exact format, and producers that have no family.
    if (name.startsWith("torch_")) {
      return "pytorch";
    }
    if (name.startsWith("psm_")) {
      return "python-shared-memory";
    }
    if (name.startsWith("sem.")) {
      return "semaphore";
    }
    if (name.startsWith("psm2_shm.")) {
      return "psm";
    }
    if (name.startsWith("cuda.shm.")) {
      return "cuda-mps";
    }
    return "other";
  }
}
