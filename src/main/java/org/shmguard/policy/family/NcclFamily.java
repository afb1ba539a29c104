package org.shmguard.policy.family;

import java.time.Duration;
import java.util.Map;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclVersion;

/**
 * NCCL's segments, both naming schemes: {@code nccl-XXXXXX} from mkstemp (2.12 and later) and
 * {@code nccl-shm-send-*} / {@code nccl-shm-recv-*} (2.3 to 2.11). The creator holds its segment
 * until a peer attaches, so a file whose every holder has exited is leaked at once; a 0-byte
 * unheld file is what a failed extension leaves (NCCL-FACTS.md). Reaped by default: the shipped
 * {@code reap.patterns} names it, and that key, with {@code reap.grace}, is its configuration.
 */
public final class NcclFamily implements SegmentFamily {
  /** File sizes (data + the 4-byte reference count) of NCCL's segments, from {@link NcclFacts}. */
  private static final Map<Long, String> SIZES = Map.ofEntries(
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

  @Override
  public String name() {
    return "nccl";
  }

  @Override
  public String producer() {
    return "NCCL (SHM transport, proxy ops pool, NVLS scratch, P2P copy engine)";
  }

  @Override
  public boolean matches(String fileName) {
    return fileName.startsWith("nccl-");
  }

  @Override
  public String pattern() {
    return "nccl-*";
  }

  @Override
  public String kind(String fileName, long sizeBytes) {
    if (fileName.startsWith("nccl-shm-send-")) {
      return "nccl-shm-send (<2.12)";
    }
    if (fileName.startsWith("nccl-shm-recv-")) {
      return "nccl-shm-recv (<2.12)";
    }
    if (sizeBytes == 0) {
      return "nccl-empty";
    }
    return SIZES.getOrDefault(sizeBytes, "nccl");
  }

  @Override
  public boolean holdersExitedMeansLeaked() {
    return true;
  }

  /** A failed extension closes the fd and never unlinks: 0 bytes, nobody holding it (2.19.1+). */
  @Override
  public boolean failedCreation(long sizeBytes) {
    return sizeBytes == 0;
  }

  @Override
  public Duration defaultGrace() {
    return null;
  }

  @Override
  public boolean reapedByDefault() {
    return true;
  }

  @Override
  public String source() {
    return "NVIDIA/nccl src/misc/shmutils.cc (2.12-2.29), src/os/linux.cc (2.30+), src/include/shm.h (<2.12)";
  }
}
