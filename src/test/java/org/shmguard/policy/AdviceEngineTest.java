package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import org.shmguard.gpu.DriverVersion;
import org.shmguard.gpu.HostGpus;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.policy.Advice.Action;

/** The advice table: each row a mount, a job and a host, with the advice and the reason expected. */
class AdviceEngineTest {
  private static final long MIB = 1L << 20;
  private static final MountSpace DOCKER_64M = new MountSpace("/dev/shm", "0:50", 64 * MIB, 64 * MIB, 0);
  private static final MountSpace SHM_96M = new MountSpace("/dev/shm", "0:51", 96 * MIB, 96 * MIB, 0);
  private static final MountSpace HOST_2G = new MountSpace("/dev/shm", "0:25", 2048 * MIB, 2000 * MIB, 0);
  private static final DriverVersion OLD = DriverVersion.parse("535.183.01"); // CUDA 12.2
  private static final DriverVersion NEW = DriverVersion.parse("570.86.15"); // CUDA 12.8
  private static final DriverVersion CUDA13 = DriverVersion.parse("580.65.06");

  private final AdviceEngine engine = new AdviceEngine(AdviceEngine.DEFAULT_LOCAL_RANKS);

  static Stream<Arguments> table() {
    return Stream.of(
        // mount, ranks, nccl, driver, gpus -> action, env, text the reason must contain
        // nodes and P2P unknown: sized as the larger of one node (a ring of SHM segments) and several
        // (a shorter chain and a proxy ops pool per rank); here several: 6 x 9,641,992 + 4 x 7,340,388
        row(DOCKER_64M, 4, "2.21.5", null, 0, Action.SHM_DISABLE, Map.of("NCCL_SHM_DISABLE", "1"), "83.2 MiB"),
        row(DOCKER_64M, 8, "2.21.5", null, 0, Action.SHM_DISABLE, Map.of("NCCL_SHM_DISABLE", "1"), "184.7 MiB"),
        row(DOCKER_64M, 4, "2.28.3", null, 0, Action.GROW, Map.of("NCCL_SHM_DISABLE", "1"), "grow by at least 66.5 MiB"),
        row(DOCKER_64M, 8, "2.28.3", null, 0, Action.GROW, Map.of("NCCL_SHM_DISABLE", "1"), "grow by at least 197.0 MiB"),
        row(DOCKER_64M, 4, "2.28.3", NEW, 0, Action.GROW, Map.of("NCCL_CUMEM_HOST_ENABLE", "1"), "cuMem host memory"),
        row(HOST_2G, 8, "2.21.5", null, 0, Action.NONE, Map.of(), "it fits"),
        row(HOST_2G, 8, "2.28.3", NEW, 0, Action.NONE, Map.of(), "it fits"),
        row(SHM_96M, 4, "2.24.3", NEW, 0, Action.CUMEM_HOST, Map.of("NCCL_CUMEM_HOST_ENABLE", "1"), "by default"),
        row(SHM_96M, 4, "2.24.3", OLD, 0, Action.SHM_DISABLE, Map.of("NCCL_SHM_DISABLE", "1"), "this one serves CUDA 12.2"),
        row(DOCKER_64M, 4, "2.23.4", NEW, 0, Action.SHM_DISABLE, Map.of("NCCL_SHM_DISABLE", "1"), "#1838"),
        row(DOCKER_64M, 4, "2.23.4", CUDA13, 0, Action.CUMEM_HOST, Map.of("NCCL_CUMEM_HOST_ENABLE", "1"), "can keep"),
        row(DOCKER_64M, 4, "2.21.5", NEW, 0, Action.SHM_DISABLE, Map.of("NCCL_SHM_DISABLE", "1"), "needs NCCL 2.23.4+"),
        row(SHM_96M, 4, null, NEW, 0, Action.GROW, Map.of("NCCL_SHM_DISABLE", "1"), "proxy ops pools 130.5 MiB"),
        row(DOCKER_64M, null, null, null, 0, Action.GROW, Map.of("NCCL_SHM_DISABLE", "1"), "8 local ranks"),
        row(HOST_2G, null, null, null, 0, Action.NONE, Map.of(), "8 local ranks"),
        row(DOCKER_64M, null, "2.21.5", null, 2, Action.NONE, Map.of(), "2 local ranks"),
        row(DOCKER_64M, 1, "2.21.5", null, 0, Action.NONE, Map.of(), "1 local rank of NCCL 2.21.5"));
  }

  private static Arguments row(MountSpace m, Integer ranks, String nccl, DriverVersion driver, int gpus,
      Action action, Map<String, String> env, String reasonPart) {
    return Arguments.of(m, ranks, nccl, driver, gpus, action, env, reasonPart);
  }

  @ParameterizedTest(name = "{0} ranks={1} nccl={2} driver={3} gpus={4} -> {5}")
  @MethodSource("table")
  void adviceFollowsTheTable(MountSpace m, Integer ranks, String nccl, DriverVersion driver, int gpus,
      Action action, Map<String, String> env, String reasonPart) {
    Advice a = engine.advise(m, new JobShape(ranks, nccl == null ? null : NcclVersion.parse(nccl)), new HostGpus(driver, gpus));

    assertThat(a.action()).as(a.reason()).isEqualTo(action);
    assertThat(a.env()).isEqualTo(env);
    assertThat(a.reason()).contains(reasonPart);
    assertThat(a.numbers()).containsKeys("sizeBytes", "freeBytes", "localRanks", "shmBuffersBytes", "proxyPoolsBytes", "neededBytes");
  }

  @Test
  void dockerDefaultWithFourRanksOf228MustGrowByThePoolShortfall() {
    Advice a = engine.advise(DOCKER_64M, new JobShape(4, NcclVersion.parse("2.28.3")), HostGpus.unknown());

    // With the SHM transport off, the larger case is several nodes with P2P: 4 proxy ops pools of
    // 34,210,176 (+4) bytes and the NVLS segment, (128 + 2560) x 4 x 2 (+4) bytes, less 64 MiB free.
    assertThat(a.growBytes()).isEqualTo(4 * 34_210_180L + (2_688L * 4 * 2 + 4) - 67_108_864L);
    // As it stands: 3 chain edges x 2 channels x (9,637,892 + 4,100) bytes and the 4 pools.
    assertThat(a.numbers().get("shmBuffersBytes")).isEqualTo(6 * 9_641_992L);
    assertThat(a.numbers().get("proxyPoolsBytes")).isEqualTo(4 * 34_210_180L);
  }

  @Test
  void unknownVersionAssumesTheLargestPoolAndSaysSo() {
    Advice a = engine.advise(HOST_2G, JobShape.unknown(), HostGpus.unknown());

    assertThat(a.numbers().get("proxyPoolsBytes")).isEqualTo(8 * 34_210_180L);
    assertThat(a.assumptions()).anyMatch(s -> s.contains("NCCL version unknown"))
        .anyMatch(s -> s.contains("default of 8")).anyMatch(s -> s.contains("driver unknown"));
  }

  @Test
  void leakedBytesAreNamedWhenTheyCauseTheShortage() {
    MountSpace full = new MountSpace("trainer:/dev/shm", "0:52", 64 * MIB, 10 * MIB, 54 * MIB);

    Advice a = engine.advise(full, new JobShape(4, NcclVersion.parse("2.21.5")), HostGpus.unknown());

    assertThat(a.action()).isEqualTo(Action.GROW);
    assertThat(a.reason()).contains("54.0 MiB of it is held by leaked segments that 'shmguard clean' frees");
  }

  @Test
  void onlyAdvisedVariablesAreEverSet() {
    table().forEach(args -> {
      Object[] v = args.get();
      Advice a = engine.advise((MountSpace) v[0], new JobShape((Integer) v[1], v[2] == null ? null : NcclVersion.parse((String) v[2])),
          new HostGpus((DriverVersion) v[3], (Integer) v[4]));
      assertThat(AdviceEngine.ADVISED_VARIABLES).containsAll(a.env().keySet());
    });
  }

  private static final JobShape ONE_NODE_8_P2P = new JobShape(8, NcclVersion.parse("2.28.3")).withNodes(1).withP2p(true);

  @Test
  void singleNodeJobWithP2pIsNotToldItNeedsProxyPools() {
    Advice a = engine.advise(DOCKER_64M, ONE_NODE_8_P2P, HostGpus.unknown());

    // P2P joins every pair: no SHM transport, no network transport, only NVLS's one segment.
    assertThat(a.action()).isEqualTo(Action.NONE);
    assertThat(a.numbers()).containsEntry("proxyPoolsBytes", 0L).containsEntry("shmBuffersBytes", 0L)
        .containsEntry("nvlsScratchBytes", 2_688L * 8 * 2 + 4);
  }

  @Test
  void multiNodeJobCountsAPoolPerRank() {
    Advice a = engine.advise(DOCKER_64M, ONE_NODE_8_P2P.withNodes(2), HostGpus.unknown());

    assertThat(a.action()).isEqualTo(Action.GROW);
    assertThat(a.numbers()).containsEntry("proxyPoolsBytes", 8 * 34_210_180L).containsEntry("proxyPools", 8L);
    assertThat(a.env()).as("neither variable lowers a P2P job's need").isEmpty();
  }

  @Test
  void consumerCardsWithCuMemHostMemoryNeedNoShmBuffers() {
    JobShape rtx = new JobShape(8, NcclVersion.parse("2.26.3")).withNodes(1).withP2p(false).withNuma(true);

    Advice a = engine.advise(DOCKER_64M, rtx, new HostGpus(NEW, 8));

    assertThat(a.action()).isEqualTo(Action.NONE);
    assertThat(a.numbers()).containsEntry("shmBuffersBytes", 0L).containsEntry("neededBytes", 0L);
  }

  @Test
  void containerWithoutSysNiceKeepsTheShmBuffersInFiles() {
    JobShape rtx = new JobShape(8, NcclVersion.parse("2.26.3")).withNodes(1).withP2p(false).withNuma(false);

    Advice a = engine.advise(HOST_2G, rtx, new HostGpus(NEW, 8));

    // 8 edges x 2 channels of segment pairs, all files: NCCL 2.26.3+ falls back to /dev/shm.
    assertThat(a.numbers()).containsEntry("shmBuffersBytes", 16 * 9_641_992L);
    Advice tight = engine.advise(DOCKER_64M, rtx, new HostGpus(NEW, 8));
    assertThat(tight.action()).isEqualTo(Action.GROW);
    assertThat(tight.env()).as("cuMem host memory cannot work here; SHM off needs 8 pools, more").isEmpty();
  }

  @Test
  void ranksOfOneProcessKeepFilesEvenWithCuMemHostMemory() {
    JobShape oneProcess = new JobShape(8, NcclVersion.parse("2.26.3")).withNodes(1).withP2p(false).withNuma(true)
        .withProcesses(1);

    Advice a = engine.advise(HOST_2G, oneProcess, new HostGpus(NEW, 8));

    assertThat(a.numbers()).containsEntry("shmBuffersBytes", 16 * 9_641_992L);
  }

  @Test
  void shmDisableWithoutP2pOnOneNodeCountsTheNetworkFallbacksPools() {
    JobShape rtx = new JobShape(4, NcclVersion.parse("2.21.5")).withNodes(1).withP2p(false);

    Advice a = engine.advise(DOCKER_64M, rtx, HostGpus.unknown());

    // 8 segment pairs (77.1 MB) do not fit 64 MiB; with SHM off the pairs go over the network
    // transport, whose 4 proxy ops pools (29.4 MB) do.
    assertThat(a.action()).isEqualTo(Action.SHM_DISABLE);
    assertThat(a.numbers()).containsEntry("shmBuffersBytes", 77_135_936L).containsEntry("proxyPoolsBytes", 0L)
        .containsEntry("neededBytes", 4 * 7_340_388L);
  }

  @Test
  void cuMemHostByDefaultInABlockedContainerBefore2263SaysInitFails() {
    JobShape shape = new JobShape(4, NcclVersion.parse("2.24.3")).withNuma(false);

    Advice a = engine.advise(HOST_2G, shape, new HostGpus(NEW, 4));

    assertThat(a.assumptions()).anyMatch(s -> s.contains("fails at init") && s.contains("NCCL_CUMEM_HOST_ENABLE=0"));
  }
}
