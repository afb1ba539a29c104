package org.shmguard.gpu;

/**
 * What one communicator of an {@link NcclJob} keeps in its host's /dev/shm while it runs, as
 * NCCL's own code sizes it (every figure from {@link NcclFacts}). Three kinds of file:
 * <ul>
 *   <li>the SHM transport's segments, for the GPU pairs without P2P: a receive segment (header
 *       and the LL, LL128 and SIMPLE buffers) and a send segment (header) per connection, that is per
 *       channel and ring edge ({@link NcclFacts#DEFAULT_CHANNELS} channels; a closed ring of L
 *       edges on one node, a chain of L-1 inside a multi-node ring). With cuMem host memory the
 *       edges between two processes leave /dev/shm; edges inside one process stay files;</li>
 *   <li>a proxy ops pool per rank, only when the communicator uses the network transport
 *       (proxyProgressInit in src/proxy.cc runs only for a transport with proxyProgress);</li>
 *   <li>one NVLS segment per node, where the GPUs are NVLink-connected (P2P) and NCCL is 2.19.1+.</li>
 * </ul>
 * Each file is its data plus NCCL's 4-byte reference count (2.16.2+).
 *
 * <pre>{@code
 * NcclFootprint f = NcclFootprint.of(NcclJob.singleNode(4, NcclVersion.of(2, 21, 5)));
 * f.shmBuffersBytes();   // 77,135,936: 4 edges x 2 channels x (9,637,892 + 4,100)
 * f.proxyPoolsBytes();   // 0: one node, no network transport
 * }</pre>
 *
 * @param shmSegmentPairs receive+send segment pairs in /dev/shm
 * @param pools proxy ops pool files
 */
public record NcclFootprint(NcclJob job, long shmSegmentPairs, long shmBuffersBytes, int pools, long proxyPoolsBytes,
    long nvlsBytes) {

  public static NcclFootprint of(NcclJob job) {
    NcclVersion v = job.nccl();
    long ref = NcclFacts.refcountBytes(v);
    long pairs = job.usesShmTransport() ? (long) NcclFacts.DEFAULT_CHANNELS * edgesInFiles(job) : 0;
    long shm = pairs * (NcclFacts.SHM_RECV_BYTES + ref + NcclFacts.SHM_SEND_BYTES + ref);
    long poolBytes = NcclFacts.proxyPoolBytes(v);
    int pools = job.usesNetwork() && poolBytes > 0 ? job.localRanks() : 0;
    long nvls = job.p2p() && job.localRanks() > 1 && v.compareTo(NcclFacts.NVLS_SINCE) >= 0
        ? NcclFacts.nvlsSegmentBytes(v, job.localRanks()) + ref : 0;
    return new NcclFootprint(job, pairs, shm, pools, pools * (poolBytes + ref), nvls);
  }

  /** Ring edges per channel whose segments are files: all, or with cuMem host memory those inside a process. */
  static long edgesInFiles(NcclJob job) {
    int l = job.localRanks();
    int p = job.processes();
    long edges = job.multiNode() ? l - 1 : l;
    if (!job.cuMemHost()) {
      return edges;
    }
    if (p == 1) {
      return edges;
    }
    // p blocks of neighbouring ranks: p edges cross between processes on a closed ring, p - 1 on a chain
    return l - p;
  }

  public long totalBytes() {
    return shmBuffersBytes + proxyPoolsBytes + nvlsBytes;
  }

  /** The file size of one proxy ops pool, refcount included; 0 when there is none. */
  public long poolFileBytes() {
    return pools == 0 ? 0 : proxyPoolsBytes / pools;
  }
}
