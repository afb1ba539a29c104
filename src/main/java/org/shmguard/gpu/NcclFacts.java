package org.shmguard.gpu;

/**
 * What NCCL puts in /dev/shm, in numbers: the one place shmguard keeps them. Every figure was read
 * from NVIDIA/nccl's sources (tags v2.12.7-1 to v2.30.7-1) and the struct sizes were measured by
 * compiling each tag's headers for x86-64 (docs/nccl.md says how); the advice engine, the doctor
 * and the segment-kind guesser all read them from here. {@link NcclFootprint} applies them to a job.
 */
public final class NcclFacts {
  /**
   * Every NCCL segment file carries a 4-byte reference count after its data (2.16.2 and later:
   * src/misc/shmutils.cc {@code realShmSize = shmSize + refSize}, moved to src/os/linux.cc:763 in 2.30.3).
   */
  public static final long REFCOUNT_BYTES = 4;
  public static final NcclVersion REFCOUNT_SINCE = NcclVersion.of(2, 16, 2);
  /**
   * Default NCCL_LL_BUFFSIZE (8 lines x 512 threads x 8 steps x 16 bytes), NCCL_LL128_BUFFSIZE
   * (120 x 640 x 8 x 8), NCCL_BUFFSIZE (SIMPLE, 1 << 22; 1 << 20 on ARM CPUs before 2.19), from
   * init.cc computeBuffSizes; and the header, sizeof(struct ncclSendMem) = sizeof(struct
   * ncclRecvMem) = 4096 in every tag measured. The SHM transport adds all three buffers to the
   * receiver's segment (NCCL_SHM_LOCALITY=2, the default; v2.30.7-1 src/transport/shm.cc:135).
   */
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
  /** Channels of a ring when nothing says otherwise: 4 ranks x 2 channels already need ~77 MB. */
  public static final int DEFAULT_CHANNELS = 2;
  /** NVLS's registration segment exists from 2.19.1 (src/transport/nvls.cc, ncclNvlsSetup). */
  public static final NcclVersion NVLS_SINCE = NcclVersion.of(2, 19, 1);
  /**
   * The release whose figures an unknown NCCL is sized with: the largest proxy ops pool
   * (34,210,176 bytes, 2.28+) and the largest NVLS segment (5,632 bytes per local rank, 2.28.7 to 2.29.7).
   */
  public static final NcclVersion LARGEST_KNOWN = NcclVersion.of(2, 29, 7);

  // NCCL_CUMEM_HOST_ENABLE (NCCL-FACTS.md, Variables): moves the SHM transport's buffers off
  // /dev/shm into cuMem host memory; never the proxy pool or the NVLS segment.
  /**
   * The variable exists, off by default. Only pairs of ranks in different processes use it: ranks
   * of one process ("legacy": equal hostHash and pidHash) always share through files
   * (v2.30.7-1 src/transport/shm.cc:105, 138 and 312).
   */
  public static final NcclVersion CUMEM_HOST_SINCE = NcclVersion.of(2, 23, 4);
  /**
   * Default "auto" (-1): on when cudaDriverGetVersion is {@link #CUMEM_HOST_AUTO_DRIVER} or newer
   * (src/misc/cudawrap.cc ncclCuMemHostEnable, v2.24.3-1:69 {@code (cudaDriverVersion >= 12060) ? 1 : 0}).
   * Off whatever is set when the driver is older than 12.2 or NCCL was
   * built with a CUDA runtime older than 12.2 ({@code CUDART_VERSION < 12020}).
   */
  public static final NcclVersion CUMEM_HOST_AUTO_SINCE = NcclVersion.of(2, 24, 3);
  public static final CudaVersion CUMEM_HOST_AUTO_DRIVER = CudaVersion.of(12, 6);
  /**
   * NCCL tries a 1-byte host-NUMA cuMemCreate and, when it fails, falls back to /dev/shm files
   * (v2.26.3-1 src/misc/cudawrap.cc:71-100; "Docker in particular is known to disable
   * get_mempolicy ... --cap-add SYS_NICE"). Before 2.26.3 the failure ends NCCL's init instead.
   */
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
   * Bytes of the proxy ops pool, {@code sizeof(struct ncclProxyOpsPool)} (src/include/proxy.h:229 in
   * v2.30.7-1: {@code MAX_OPS_PER_PEER * NCCL_MAX_LOCAL_RANKS} ops, the free lists, a mutex and a
   * condition variable), or 0 before 2.12. Measured per tag on x86-64: 64-byte ops x 1024 x 64
   * (2.12-2.19), 88 x 1024 x 64 (2.20), 112 (2.21-2.22), 160 (2.23), 216 (2.24), 216 x 2048 x 72
   * (2.25), 224 (2.26-2.27), 232 (2.28-2.30); each plus 352 or 384 bytes. The file is
   * {@link #refcountBytes} more. Releases after the last one known use the last known size.
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


  /** The releases from which the proxy ops pool has a new size, oldest first; each is larger than the last. */
  public static final java.util.List<NcclVersion> PROXY_POOL_RESIZED = java.util.List.of(NcclVersion.of(2, 12, 0),
      NcclVersion.of(2, 20, 0), NcclVersion.of(2, 21, 0), NcclVersion.of(2, 23, 0), NcclVersion.of(2, 24, 0),
      NcclVersion.of(2, 25, 0), NcclVersion.of(2, 26, 0), NcclVersion.of(2, 28, 0));

  /** The newest proxy ops pool known: what an unknown NCCL version is assumed to need. */
  public static long largestProxyPoolBytes() {
    return proxyPoolBytes(NcclVersion.of(Integer.MAX_VALUE, 0, 0));
  }


  /** The reference count NCCL appends to each segment file: 4 bytes from 2.16.2, none before. */
  public static long refcountBytes(NcclVersion v) {
    return v.compareTo(REFCOUNT_SINCE) >= 0 ? REFCOUNT_BYTES : 0;
  }

  /**
   * The one segment NCCL's NVLS setup creates per communicator and node (local rank 0 creates it,
   * the others attach: src/transport/nvls.cc ncclNvlsSetup), without its reference count; 0 before
   * 2.19.1. Its size, with S = {@code sizeof(struct localRegData)} measured per tag on x86-64:
   * 2.19: {@code (8 + S*L) * 2}, S = 80; 2.20 to 2.28.0: {@code (8 + 2S*L) * 2}, S = 736 (2.20),
   * 752 (2.21-2.22), 1280 (2.23), 1152 (2.24), 1280 (2.25), 1288 (2.26), 1296 (2.27); 2.28.3 on:
   * {@code (128*L + roundup(2S, 128)*L) * 2} (v2.30.7-1 nvls.cc:630-636), S = 1272 (2.28.3),
   * 1296 (2.28.7-2.29.7), 736 (2.30.3+).
   */
  public static long nvlsSegmentBytes(NcclVersion v, int localRanks) {
    if (v.compareTo(NVLS_SINCE) < 0 || localRanks < 1) {
      return 0;
    }
    long l = localRanks;
    if (!v.atLeast(2, 20, 0)) {
      return (8 + 80 * l) * 2;
    }
    if (!v.atLeast(2, 28, 3)) {
      long s = !v.atLeast(2, 21, 0) ? 736 : !v.atLeast(2, 23, 0) ? 752 : !v.atLeast(2, 24, 0) ? 1280
          : !v.atLeast(2, 25, 0) ? 1152 : !v.atLeast(2, 26, 0) ? 1280 : !v.atLeast(2, 27, 0) ? 1288 : 1296;
      return (8 + 2 * s * l) * 2;
    }
    long s = !v.atLeast(2, 28, 7) ? 1272 : !v.atLeast(2, 30, 0) ? 1296 : 736;
    long typeSize = (2 * s + 127) / 128 * 128;
    return (128 * l + typeSize * l) * 2;
  }

}
