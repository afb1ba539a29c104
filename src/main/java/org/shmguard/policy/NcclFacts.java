package org.shmguard.policy;

/**
 * What NCCL puts in /dev/shm, in numbers: the one place shmguard keeps them. Every figure comes
 * from ../shared/NCCL-FACTS.md (read from NVIDIA/nccl's sources, tags v2.3.5 to v2.30.7); the
 * advice engine, the doctor and the segment-kind guesser all read them from here.
 */
public final class NcclFacts {
  /** Every NCCL segment file carries a 4-byte reference count after its data (2.16.2 and later). */
  public static final long REFCOUNT_BYTES = 4;
  /** Default NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_BUFFSIZE (SIMPLE), and the header. */
  public static final long LL_BYTES = 524_288;
  public static final long LL128_BYTES = 4_915_200;
  public static final long SIMPLE_BYTES = 4_194_304;
  public static final long HEADER_BYTES = 4_096;
  /** The SHM transport's receive buffer with default sizes: 9,637,888 bytes, the file 9,637,892. */
  public static final long SHM_RECV_BYTES = HEADER_BYTES + LL_BYTES + LL128_BYTES + SIMPLE_BYTES;
  /** The send side: 4,096 bytes (file 4,100). */
  public static final long SHM_SEND_BYTES = HEADER_BYTES;
  /** P2P copy-engine segment. */
  public static final long P2P_CE_BYTES = 8_192;
  /** NVLS scratch per local rank (2.19+), approximately. */
  public static final long NVLS_SCRATCH_BYTES_PER_RANK = 3_328;
  /** Channels of a ring when nothing says otherwise: 4 ranks x 2 channels already need ~77 MB. */
  public static final int DEFAULT_CHANNELS = 2;
  /** NVLS scratch exists from 2.19 (NCCL-FACTS.md, Sizes). */
  public static final NcclVersion NVLS_SINCE = NcclVersion.of(2, 19, 0);

  // NCCL_CUMEM_HOST_ENABLE (NCCL-FACTS.md, Variables): moves the SHM transport's buffers off
  // /dev/shm into cuMem host memory; never the proxy pool or the NVLS scratch.
  /** The variable exists, off by default. */
  public static final NcclVersion CUMEM_HOST_SINCE = NcclVersion.of(2, 23, 4);
  /** Default "auto": on when the CUDA driver is {@link #CUMEM_HOST_AUTO_DRIVER} or newer (and the runtime 12.2+). */
  public static final NcclVersion CUMEM_HOST_AUTO_SINCE = NcclVersion.of(2, 24, 3);
  public static final CudaVersion CUMEM_HOST_AUTO_DRIVER = CudaVersion.of(12, 6);
  /** NCCL probes cuMem host memory and falls back when it fails. */
  public static final NcclVersion CUMEM_HOST_FALLBACK_SINCE = NcclVersion.of(2, 26, 3);
  /** Below this driver, cuMem host memory can fail between GPUs without P2P (NVIDIA/nccl #1838). */
  public static final CudaVersion CUMEM_HOST_NO_P2P_SAFE_DRIVER = CudaVersion.of(13, 0);

  // GPU memory, not /dev/shm: the doctor reports the headroom (../shared/NCCL-FACTS.md, Variables;
  // ../shared/SCENARIOS.md #4).
  /**
   * GPU memory NVLS (NVLink SHARP, NCCL 2.17.1+, on by default) takes per rank on one node:
   * about 1.5 GB (2.4 GB was seen on 8xH200, vLLM #9699; about 8 GB per rank with 5 nodes and 12
   * communicators). NCCL 2.21+ uses less; NCCL_NVLS_ENABLE=0 frees it. An approximation.
   */
  public static final long NVLS_GPU_BYTES_PER_RANK = 1_536L * 1024 * 1024;
  /** NVLS needs NVSwitch-connected GPUs of compute capability 9.0 (Hopper) or later. */
  public static final int NVLS_MIN_COMPUTE_MAJOR = 9;

  /**
   * The driver branch whose user-mode part fails cuMemImportFromShareableHandle with "invalid
   * device ordinal" (CUDA error 101) when two containers on one node each see one GPU: reported
   * with NCCL 2.26.2 and CUDA 12.8 in ncclP2pImportShareableBuffer (NVIDIA/nccl #1647; the same
   * import of a fabric handle, 1 node failing where 2 nodes work, in
   * kubernetes-sigs/dra-driver-nvidia-gpu #294). Said to be fixed in later drivers; the first
   * fixed release is not recorded here.
   */
  public static final int CUMEM_IMPORT_ORDINAL_BUG_DRIVER_BRANCH = 570;

  private NcclFacts() {}

  /** The receive buffer for given buffer sizes: 4096 + LL + LL128 + SIMPLE. */
  public static long shmRecvBytes(long ll, long ll128, long simple) {
    return HEADER_BYTES + ll + ll128 + simple;
  }

  /**
   * Bytes of the proxy ops pool (one per rank, 2.12 and later; the file is 4 bytes more), or 0
   * before 2.12. Releases after the last one known use the last known size.
   */
  public static long proxyPoolBytes(NcclVersion v) {
    if (!v.atLeast(2, 12, 0)) {
      return 0;
    }
    if (!v.atLeast(2, 20, 0)) {
      return 4_194_656;
    }
    if (!v.atLeast(2, 21, 0)) {
      return 5_767_520;
    }
    if (!v.atLeast(2, 23, 0)) {
      return 7_340_384;
    }
    if (!v.atLeast(2, 24, 0)) {
      return 10_486_112;
    }
    if (!v.atLeast(2, 25, 0)) {
      return 14_156_128;
    }
    if (!v.atLeast(2, 26, 0)) {
      return 31_850_880;
    }
    if (!v.atLeast(2, 28, 0)) {
      return 33_030_528;
    }
    return 34_210_176;
  }

  /**
   * /dev/shm bytes the SHM transport needs for a ring over {@code localRanks} ranks: each rank
   * receives from one peer and sends to one per channel, one segment per direction.
   */
  public static long shmTransportBytes(int localRanks, int channels) {
    if (localRanks < 2) {
      return 0;
    }
    return (long) localRanks * channels * ((SHM_RECV_BYTES + REFCOUNT_BYTES) + (SHM_SEND_BYTES + REFCOUNT_BYTES));
  }

  /** The releases from which the proxy ops pool has a new size, oldest first; each is larger than the last. */
  public static final java.util.List<NcclVersion> PROXY_POOL_RESIZED = java.util.List.of(NcclVersion.of(2, 12, 0),
      NcclVersion.of(2, 20, 0), NcclVersion.of(2, 21, 0), NcclVersion.of(2, 23, 0), NcclVersion.of(2, 24, 0),
      NcclVersion.of(2, 25, 0), NcclVersion.of(2, 26, 0), NcclVersion.of(2, 28, 0));

  /** The newest proxy ops pool known: what an unknown NCCL version is assumed to need. */
  public static long largestProxyPoolBytes() {
    return proxyPoolBytes(NcclVersion.of(Integer.MAX_VALUE, 0, 0));
  }

  /** NVLS scratch of {@code localRanks} ranks: 0 before 2.19. */
  public static long nvlsScratchBytes(int localRanks, NcclVersion v) {
    return v.atLeast(2, 19, 0) ? (long) localRanks * NVLS_SCRATCH_BYTES_PER_RANK : 0;
  }

  /** Every rank's proxy ops pool file, which NCCL_SHM_DISABLE=1 does not remove. */
  public static long proxyPoolsBytes(int localRanks, NcclVersion v) {
    long pool = proxyPoolBytes(v);
    return pool == 0 ? 0 : localRanks * (pool + REFCOUNT_BYTES);
  }
}
