package org.shmguard.policy;

import org.shmguard.gpu.NcclVersion;


/**
 * What a launcher knows about the job it is about to start; every part may be unknown (null), and
 * the engine then assumes what needs the most /dev/shm (and says so).
 *
 * @param localRanks ranks of the job on this host (one per GPU it uses here)
 * @param nccl the NCCL release the job loads
 * @param nodes hosts the job spans (more than one: NCCL's network transport, and its proxy ops pools)
 * @param p2p whether every pair of the job's GPUs here has CUDA P2P (NVLink or PCIe); false on
 *     consumer cards, whose pairs go through the SHM transport
 * @param processes processes the local ranks live in (1 when one process drives every GPU)
 * @param numa whether the job's processes may use the NUMA memory-policy calls that cuMem host
 *     memory needs (false in a container whose seccomp filter blocks them: Docker's default
 *     profile without CAP_SYS_NICE)
 */
public record JobShape(Integer localRanks, NcclVersion nccl, Integer nodes, Boolean p2p, Integer processes, Boolean numa) {
  public static final int MAX_RANKS = 1024;
  public static final int MAX_NODES = 1 << 20;

  public JobShape {
    if (localRanks != null && (localRanks < 1 || localRanks > MAX_RANKS)) {
      throw new IllegalArgumentException("local ranks must be from 1 to " + MAX_RANKS + ", not " + localRanks);
    }
    if (nodes != null && (nodes < 1 || nodes > MAX_NODES)) {
      throw new IllegalArgumentException("nodes must be from 1 to " + MAX_NODES + ", not " + nodes);
    }
    if (processes != null && (processes < 1 || processes > MAX_RANKS)) {
      throw new IllegalArgumentException("processes must be from 1 to " + MAX_RANKS + ", not " + processes);
    }
    if (processes != null && localRanks != null && processes > localRanks) {
      throw new IllegalArgumentException("processes (" + processes + ") cannot outnumber local ranks (" + localRanks + ")");
    }
  }

  /** Only the ranks and the release known: what version 1 of the protocol started with. */
  public JobShape(Integer localRanks, NcclVersion nccl) {
    this(localRanks, nccl, null, null, null, null);
  }

  public static JobShape unknown() {
    return new JobShape(null, null);
  }

  public JobShape withNodes(Integer v) {
    return new JobShape(localRanks, nccl, v, p2p, processes, numa);
  }

  public JobShape withP2p(Boolean v) {
    return new JobShape(localRanks, nccl, nodes, v, processes, numa);
  }

  public JobShape withProcesses(Integer v) {
    return new JobShape(localRanks, nccl, nodes, p2p, v, numa);
  }

  public JobShape withNuma(Boolean v) {
    return new JobShape(localRanks, nccl, nodes, p2p, processes, v);
  }
}
