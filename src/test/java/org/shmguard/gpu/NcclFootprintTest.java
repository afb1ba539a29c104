package org.shmguard.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What NCCL puts in /dev/shm per release and job shape, every figure worked out by hand from
 * NVIDIA/nccl's sources (tags named per row). The sizes of structs were measured by compiling each
 * tag's headers for x86-64 (docs/nccl.md, "How the figures were measured"):
 * <ul>
 *   <li>SHM receive segment 4096 + 524,288 + 4,915,200 + 4,194,304 = 9,637,888 bytes, send 4096
 *       (src/transport/shm.cc shmSendSetup and shmRecvSetup, v2.30.7-1:88-102 and 121-135); files +4 from 2.16.2
 *       (src/misc/shmutils.cc:53-54 in v2.16.2-1, src/os/linux.cc:762-763 in v2.30.7-1). A pair: 9,641,992.</li>
 *   <li>Proxy ops pool sizeof(struct ncclProxyOpsPool) (src/include/proxy.h:227-236 in v2.30.7-1):
 *       4,194,656 (v2.18.6-1), 7,340,384 (v2.21.5-1), 14,156,128 (v2.24.3-1), 34,210,176 (v2.30.7-1);
 *       made only by proxyProgressInit, for a transport with proxyProgress (src/proxy.cc:1526-1531 in v2.30.7-1):
 *       net and collnet, never p2p or shm by default.</li>
 *   <li>NVLS segment, one per node (src/transport/nvls.cc:630-636 in v2.30.7-1): (128 + 1536) x 2 x L;
 *       v2.24.3-1:450-454 (8 + 2 x 1152 x L) x 2; v2.21.5-1:397-401 (8 + 2 x 752 x L) x 2; none in v2.18.6-1.</li>
 *   <li>Same-process pairs keep files even with cuMem host memory (legacy when hostHash and pidHash
 *       match: src/transport/shm.cc:105,138,312 in v2.30.7-1).</li>
 * </ul>
 */
class NcclFootprintTest {
  private static final NcclVersion V2_11 = NcclVersion.of(2, 11, 4);
  private static final NcclVersion V2_15 = NcclVersion.of(2, 15, 5);
  private static final NcclVersion V2_18 = NcclVersion.of(2, 18, 6);
  private static final NcclVersion V2_21 = NcclVersion.of(2, 21, 5);
  private static final NcclVersion V2_24 = NcclVersion.of(2, 24, 3);
  private static final NcclVersion V2_28 = NcclVersion.of(2, 28, 7);
  private static final NcclVersion V2_30 = NcclVersion.of(2, 30, 7);
  private static final long PAIR = 9_637_892 + 4_100;

  static Stream<Arguments> table() {
    return Stream.of(
        // job -> SHM segment pairs, SHM bytes, pools, pool bytes, NVLS bytes
        row("8 GPUs with P2P on one node: nothing but NVLS's segment, no proxy pool",
            NcclJob.singleNode(8, V2_30).withP2p(true), 0, 0, 0, 0, 3_328 * 8 + 4),
        row("8 GPUs without P2P on one node: a closed ring of 8 edges x 2 channels",
            NcclJob.singleNode(8, V2_30), 16, 16 * PAIR, 0, 0, 0),
        row("the same with cuMem host memory, one process per rank: every pair crosses processes",
            NcclJob.singleNode(8, V2_30).withCuMemHost(true), 0, 0, 0, 0, 0),
        row("the same in one process: every pair stays a file",
            NcclJob.singleNode(8, V2_30).withCuMemHost(true).withProcesses(1), 16, 16 * PAIR, 0, 0, 0),
        row("the same in two processes of 4: 6 of the 8 edges inside a process",
            NcclJob.singleNode(8, V2_30).withCuMemHost(true).withProcesses(2), 12, 12 * PAIR, 0, 0, 0),
        row("NCCL_SHM_DISABLE=1 without P2P: the network transport, a proxy pool per rank",
            NcclJob.singleNode(8, V2_30).withShmDisabled(true), 0, 0, 8, 8 * 34_210_180L, 0),
        row("NCCL_SHM_DISABLE=1 with P2P: P2P carries every pair, no pool",
            NcclJob.singleNode(8, V2_30).withP2p(true).withShmDisabled(true), 0, 0, 0, 0, 3_328 * 8 + 4),
        row("multi-node with P2P: a pool per rank and NVLS",
            NcclJob.singleNode(8, V2_30).withMultiNode(true).withP2p(true), 0, 0, 8, 8 * 34_210_180L, 3_328 * 8 + 4),
        row("multi-node without P2P: a chain of 7 edges x 2 channels and a pool per rank",
            NcclJob.singleNode(8, V2_30).withMultiNode(true), 14, 14 * PAIR, 8, 8 * 34_210_180L, 0),
        row("one rank of a multi-node job: its own pool",
            NcclJob.singleNode(1, V2_30).withMultiNode(true), 0, 0, 1, 34_210_180L, 0),
        row("2.28.7: the largest NVLS segment, (128 + 2688) x 2 per rank",
            NcclJob.singleNode(8, V2_28).withP2p(true), 0, 0, 0, 0, 5_632 * 8 + 4),
        row("2.24.3 without P2P on one node",
            NcclJob.singleNode(8, V2_24), 16, 16 * PAIR, 0, 0, 0),
        row("2.24.3 with NCCL_SHM_DISABLE=1: 8 pools of 14,156,128 + 4",
            NcclJob.singleNode(8, V2_24).withShmDisabled(true), 0, 0, 8, 8 * 14_156_132L, 0),
        row("2.24.3 with P2P: NVLS (8 + 2 x 1152 x 8) x 2",
            NcclJob.singleNode(8, V2_24).withP2p(true), 0, 0, 0, 0, 36_880 + 4),
        row("2.21.5, 4 ranks without P2P: the 77 MB that overflows Docker's 64 MB",
            NcclJob.singleNode(4, V2_21), 8, 77_135_936L, 0, 0, 0),
        row("2.21.5, 4 ranks of a multi-node job without P2P",
            NcclJob.singleNode(4, V2_21).withMultiNode(true), 6, 6 * PAIR, 4, 4 * 7_340_388L, 0),
        row("2.21.5 with P2P: NVLS (8 + 2 x 752 x 8) x 2",
            NcclJob.singleNode(8, V2_21).withP2p(true), 0, 0, 0, 0, 24_080 + 4),
        row("2.18.6 multi-node with P2P: pools of 4,194,656 + 4, no NVLS segment yet",
            NcclJob.singleNode(8, V2_18).withMultiNode(true).withP2p(true), 0, 0, 8, 8 * 4_194_660L, 0),
        row("2.15.5: no reference count after the data yet",
            NcclJob.singleNode(2, V2_15).withMultiNode(true), 2, 2 * (9_637_888 + 4_096), 2, 2 * 4_194_656L, 0),
        row("2.11.4: no proxy ops pool in /dev/shm",
            NcclJob.singleNode(2, V2_11).withMultiNode(true).withP2p(true), 0, 0, 0, 0, 0));
  }

  private static Arguments row(String what, NcclJob job, long pairs, long shm, int pools, long poolBytes, long nvls) {
    return Arguments.of(what, job, pairs, shm, pools, poolBytes, nvls);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void footprintIsWhatNcclAllocates(String what, NcclJob job, long pairs, long shm, int pools, long poolBytes, long nvls) {
    NcclFootprint f = NcclFootprint.of(job);

    assertThat(f.shmSegmentPairs()).as("segment pairs").isEqualTo(pairs);
    assertThat(f.shmBuffersBytes()).as("SHM bytes").isEqualTo(shm);
    assertThat(f.pools()).as("pools").isEqualTo(pools);
    assertThat(f.proxyPoolsBytes()).as("pool bytes").isEqualTo(poolBytes);
    assertThat(f.nvlsBytes()).as("NVLS bytes").isEqualTo(nvls);
    assertThat(f.totalBytes()).isEqualTo(shm + poolBytes + nvls);
  }

  @Test
  void singleNodeJobWithoutP2pHasNoProxyPoolAtAll() {
    NcclFootprint f = NcclFootprint.of(NcclJob.singleNode(8, V2_30));

    assertThat(f.proxyPoolsBytes()).isZero();
    assertThat(NcclFootprint.of(NcclJob.singleNode(8, V2_30).withMultiNode(true)).proxyPoolsBytes())
        .isEqualTo(8 * 34_210_180L);
  }

  @Test
  void cuMemHostMemoryBeforeItExistedIsRefused() {
    assertThatThrownBy(() -> NcclJob.singleNode(4, V2_21).withCuMemHost(true))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2.23.4");
  }
}
