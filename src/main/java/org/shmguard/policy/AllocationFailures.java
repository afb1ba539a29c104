package org.shmguard.policy;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.model.ShmMount;
import org.shmguard.text.Bytes;

/**
 * Finds every failed NCCL segment creation, and says what the mount's free space tells about it.
 * A 0-byte {@code nccl-*} file that nobody holds is what NCCL leaves when it cannot extend a new
 * segment (the error path closes the fd and never unlinks), whichever segment it was: an SHM
 * receive or send buffer, or the proxy ops pool (7 to 34 MB, 2.12 and later). So every such file
 * is a failure, whatever the free space; the free space only says which segments could not have
 * fit, and so how likely lack of space was the cause.
 *
 * <pre>{@code
 * for (AllocationFailures.Failure f : AllocationFailures.find(judgement)) { alert(f.assessment(), f.explanation()); }
 * }</pre>
 */
public final class AllocationFailures {
  /** The file NCCL extends for an SHM receive buffer at default sizes: the size in the ENOSPC reports. */
  public static final long SEGMENT_FILE_BYTES = NcclFacts.SHM_RECV_BYTES + NcclFacts.REFCOUNT_BYTES;

  /** One failed creation, with a sentence on what the free space says about it. */
  public record Failure(Assessment assessment, String explanation) {}

  private AllocationFailures() {}

  public static List<Failure> find(Judgement j) {
    List<Failure> found = new ArrayList<>();
    for (Assessment a : j.segments()) {
      if (a.verdict() == Verdict.FAILED_CREATION) {
        ShmMount m = a.mount();
        found.add(new Failure(a, explain(m == null ? null : m.usage())));
      }
    }
    return found;
  }

  /**
   * The free space under which a mount counts as out of space for NCCL: the largest segment file
   * NCCL makes at default sizes (the newest proxy ops pool known, or an SHM receive buffer).
   */
  public static final long LARGEST_SEGMENT_FILE_BYTES = Math.max(SEGMENT_FILE_BYTES,
      NcclFacts.largestProxyPoolBytes() + NcclFacts.REFCOUNT_BYTES);

  /**
   * Whether the mount itself shows the evidence of a failed extension for lack of space: less free
   * than {@link #LARGEST_SEGMENT_FILE_BYTES} at the pass that saw the file. Anything else (the
   * free space unknown, or room for any NCCL segment of default size) says nothing about the
   * node: the empty file is its owner's matter, not the node's (a job's own limit, a larger
   * NCCL_BUFFSIZE, or any user making empty {@code nccl-*} files).
   */
  public static boolean outOfSpace(ShmMount.Usage usage) {
    return usage != null && usage.freeBytes() < LARGEST_SEGMENT_FILE_BYTES;
  }

  /** What {@code usage}'s free space says about a failed NCCL creation on that mount. */
  public static String explain(ShmMount.Usage usage) {
    String what = "a 0-byte NCCL segment nobody holds: NCCL could not extend a new segment";
    if (usage == null) {
      return what + " (the mount's free space is unknown)";
    }
    long free = usage.freeBytes();
    if (free < SEGMENT_FILE_BYTES) {
      return what + ", on a mount with " + Bytes.human(free) + " free, less than the " + Bytes.human(SEGMENT_FILE_BYTES)
          + " an SHM receive segment needs";
    }
    for (NcclVersion v : NcclFacts.PROXY_POOL_RESIZED) {
      long pool = NcclFacts.proxyPoolBytes(v) + NcclFacts.REFCOUNT_BYTES;
      if (free < pool) {
        return what + ", on a mount with " + Bytes.human(free) + " free: enough for an SHM receive segment, less than the "
            + Bytes.human(pool) + " the proxy ops pool of NCCL " + v.major() + "." + v.minor() + " and later needs";
      }
    }
    return what + ", on a mount with " + Bytes.human(free) + " free, enough for any NCCL segment of default size: "
        + "the space was freed since, or the segment was larger (NCCL_BUFFSIZE and the like), or a limit other "
        + "than the mount's size refused it";
  }
}
