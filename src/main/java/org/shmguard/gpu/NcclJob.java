package org.shmguard.gpu;

import java.util.Objects;

/**
 * One NCCL communicator's ranks on one host, as far as /dev/shm is concerned: every field known
 * (the advice engine resolves what a request leaves open before it builds one).
 *
 * <pre>{@code
 * NcclJob job = NcclJob.singleNode(8, NcclVersion.of(2, 21, 5)).withP2p(false);
 * NcclFootprint.of(job).totalBytes();
 * }</pre>
 *
 * @param localRanks ranks of the communicator on this host
 * @param nccl the NCCL release
 * @param multiNode whether the communicator spans more than this host (then it uses the network transport)
 * @param p2p whether every pair of its GPUs here reaches the other by CUDA P2P (NVLink or PCIe)
 * @param processes processes the local ranks live in (1 to localRanks), ranks of a process next to each other
 * @param shmDisabled NCCL_SHM_DISABLE=1
 * @param cuMemHost whether NCCL keeps the SHM transport's cross-process buffers in cuMem host memory
 */
public record NcclJob(int localRanks, NcclVersion nccl, boolean multiNode, boolean p2p, int processes,
    boolean shmDisabled, boolean cuMemHost) {
  public NcclJob {
    Objects.requireNonNull(nccl, "nccl");
    if (localRanks < 1) {
      throw new IllegalArgumentException("localRanks must be at least 1, not " + localRanks);
    }
    if (processes < 1 || processes > localRanks) {
      throw new IllegalArgumentException("processes must be from 1 to localRanks (" + localRanks + "), not " + processes);
    }
    if (cuMemHost && nccl.compareTo(NcclFacts.CUMEM_HOST_SINCE) < 0) {
      throw new IllegalArgumentException("NCCL " + nccl + " has no cuMem host memory (it came in "
          + NcclFacts.CUMEM_HOST_SINCE + ")");
    }
  }

  /** One process per rank, on one host, without P2P, SHM on, buffers in files. */
  public static NcclJob singleNode(int localRanks, NcclVersion nccl) {
    return new NcclJob(localRanks, nccl, false, false, localRanks, false, false);
  }

  public NcclJob withMultiNode(boolean v) {
    return new NcclJob(localRanks, nccl, v, p2p, processes, shmDisabled, cuMemHost);
  }

  public NcclJob withP2p(boolean v) {
    return new NcclJob(localRanks, nccl, multiNode, v, processes, shmDisabled, cuMemHost);
  }

  public NcclJob withProcesses(int v) {
    return new NcclJob(localRanks, nccl, multiNode, p2p, v, shmDisabled, cuMemHost);
  }

  public NcclJob withShmDisabled(boolean v) {
    return new NcclJob(localRanks, nccl, multiNode, p2p, processes, v, cuMemHost);
  }

  public NcclJob withCuMemHost(boolean v) {
    return new NcclJob(localRanks, nccl, multiNode, p2p, processes, shmDisabled, v);
  }

  /** Some pair of its GPUs here talks through the SHM transport. */
  public boolean usesShmTransport() {
    return localRanks > 1 && !p2p && !shmDisabled;
  }

  /**
   * Some connection of it has proxy progress: the network transport, for other hosts or, on one
   * host, for the pairs neither P2P nor SHM can join (NCCL_SHM_DISABLE=1 without P2P).
   */
  public boolean usesNetwork() {
    return multiNode || localRanks > 1 && !p2p && shmDisabled;
  }

  /** In words, for the advice's text: "8 ranks on one node, no P2P, 8 processes". */
  public String describe() {
    return localRanks + " rank" + (localRanks == 1 ? "" : "s") + (multiNode ? " of a multi-node job" : " on one node")
        + (localRanks > 1 ? (p2p ? ", P2P between all GPUs" : ", no P2P") : "")
        + (processes < localRanks ? ", " + processes + " process" + (processes == 1 ? "" : "es") : "")
        + (shmDisabled ? ", NCCL_SHM_DISABLE=1" : "") + (cuMemHost ? ", SHM buffers in cuMem host memory" : "");
  }
}
