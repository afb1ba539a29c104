package org.shmguard.policy;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.model.ShmMount;

/**
 * Finds the signature of an NCCL allocation that failed for lack of space: a 0-byte unheld
 * {@code nccl-*} file (what a failed extension leaves) on a mount whose free space is below one
 * SHM receive segment, the size NCCL's "failed to extend ... No space left on device" reports.
 */
public final class AllocationFailures {
  /** The file NCCL extends for an SHM receive buffer at default sizes: the size in the ENOSPC reports. */
  public static final long SEGMENT_FILE_BYTES = NcclFacts.SHM_RECV_BYTES + NcclFacts.REFCOUNT_BYTES;

  private AllocationFailures() {}

  public static List<Assessment> find(Judgement j) {
    List<Assessment> found = new ArrayList<>();
    for (Assessment a : j.segments()) {
      ShmMount m = a.mount();
      if (a.verdict() == Verdict.FAILED_CREATION && m != null && m.usage() != null
          && m.usage().freeBytes() < SEGMENT_FILE_BYTES) {
        found.add(a);
      }
    }
    return found;
  }
}
