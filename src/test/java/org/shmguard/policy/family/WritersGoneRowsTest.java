package org.shmguard.policy.family;

import static org.shmguard.policy.family.FamilyRow.row;

import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.policy.Verdict;

/**
 * What each family's files become on a pod's or a container's volume once every writer of it has
 * exited (a crashed engine between two starts): nothing holds anything on the volume and no
 * process of the container that mounted it is left. The files a crashed engine leaves are leaked
 * at once and reaped by default (vLLM's offload region, Triton's regions, NCCL's, Open MPI's, and
 * SGLang's and PyTorch's once their creator is provably dead); Python shared memory, which names
 * no creator, keeps its grace and stays reported; and nothing changes while any process holds
 * anything on the volume, on the host's /dev/shm, or after an incomplete pass.
 */
class WritersGoneRowsTest {
  private static final String VOLUME = "/var/lib/kubelet/pods/7c81/volumes/kubernetes.io~empty-dir/dshm";
  private static final String OFFLOAD = "vllm_offload_2510ed76-7d9e-4474-a959-ed83bc66582c.mmap";
  private static final long GIB = 1L << 30;
  private static final String GONE = "every writer of this volume has exited: no process holds any file on it and no "
      + "process of the container that mounted it at /dev/shm is left";

  static Stream<FamilyRow> table() {
    return Stream.of(
        row(FamilyCase.of("vLLM offload region of a crashed engine on a dead pod volume: reaped at once")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, true, "unheld; " + GONE),
        row(FamilyCase.of("the same on a configured tmpfs never seen in a container: grace (a host process may open it by path)")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("the container seen at the volume still runs: grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100).running(4100, 900),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("the container seen at the volume was listed in full only up to discovery's limit: grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100, 4101, 4102, 4103),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("a kubelet emptyDir found while no container of the pod runs: reaped")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onPodVolume(),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("a kubelet emptyDir a running container shows at /dev/shm: grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onPodVolume(4100).running(4100, 900),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("a kubelet emptyDir whose container, seen at it, has exited: reaped")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onPodVolume(4100),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("the same on the host's /dev/shm: grace, reported")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("the same on a configured mount at /dev/shm (the host's): grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt("/dev/shm").afterContainer(4100),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("another file on the volume is still mapped: a writer lives, grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100).otherFileHeldBy(300),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("the region itself is mapped: held")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100).heldBy(300),
            Verdict.HELD, false, "held by pid 300"),
        row(FamilyCase.of("a /proc pass that missed a process proves nothing: grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100).incompletePass("cannot read pid 77"),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("found at a container's /dev/shm whose process still runs: grace")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onContainerMountOf(4100).running(4100, 900),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("found at a container's /dev/shm whose every process has exited: reaped")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onContainerMountOf(4100, 4101),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("found at a container's /dev/shm with as many processes as discovery lists: proves nothing")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onContainerMountOf(4100, 4101, 4102, 4103),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("found at a container's /dev/shm with no process named: proves nothing")
            .file(OFFLOAD, 17 * GIB, Duration.ofSeconds(3)).onContainerMount(),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("Triton Python backend region on a dead volume: reaped")
            .file("triton_python_backend_shm_region_3", 64 << 20, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("Open MPI segment on a dead volume: reaped")
            .file("vader_segment.node1.9a3c0001.0", 4 << 20, Duration.ofSeconds(3)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("NCCL file never seen held, 2 s old, on a dead volume: reaped without its grace")
            .file("nccl-AbC123", 9637892, Duration.ofSeconds(2)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, true, GONE),
        row(FamilyCase.of("SGLang segment, its creator's pid reused by the restarted container: reaped")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onVolumeAt(VOLUME).afterContainer(4100).runningInPidNamespace(4026532777L, 90001, Duration.ofSeconds(2), true),
            Verdict.LEAKED, true, "started after the file was made"),
        row(FamilyCase.of("SGLang segment of a dead container, pid 45 a host daemon that shows the volume elsewhere: reaped")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onContainerMountOf(4100).runningInPidNamespace(4026531836L, 45, Duration.ofDays(3), true, false),
            Verdict.LEAKED, true, "(pid 45 does not have this volume at /dev/shm, where its name was made)"),
        row(FamilyCase.of("the same after the container ended, the volume watched at the kubelet's path: reaped")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onVolumeAt(VOLUME).afterContainer(4100).runningInPidNamespace(4026531836L, 45, Duration.ofDays(3), true, false),
            Verdict.LEAKED, true, "(pid 45 does not have this volume at /dev/shm, where its name was made)"),
        row(FamilyCase.of("SGLang segment of a dead container, pid 45 alive in a container with it at /dev/shm: grace")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onContainerMountOf(4100).runningInPidNamespace(4026532201L, 81234, Duration.ofMinutes(5), true, true),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("SGLang segment whose creator lives (it holds nothing): grace, kept")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onVolumeAt(VOLUME).afterContainer(4100).runningInPidNamespace(4026532201L, 81234, Duration.ofMinutes(5), true),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("SGLang segment when the creator lookup missed a process: grace")
            .file("sgl_shm_mm_45_1a2b3c4d", 300 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onVolumeAt(VOLUME).afterContainer(4100).lookupMissed("cannot read the PID namespace of pid 777"),
            Verdict.GRACE, false, "grace is 5m"),
        row(FamilyCase.of("PyTorch file whose creator no process can be: reaped")
            .file("torch_45_3735928559_7", 1 << 20, Duration.ofSeconds(20)).bornAgo(Duration.ofSeconds(20))
            .onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, true, "has exited: no live process that can reach this mount has pid 45"),
        row(FamilyCase.of("Python shared memory names no creator: its grace holds on a dead volume")
            .file("psm_1a2b3c4d", 1 << 20, Duration.ofSeconds(20)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.GRACE, false, "grace is 10m"),
        row(FamilyCase.of("Python shared memory past its grace on a dead volume: reported, not reaped")
            .file("psm_1a2b3c4d", 1 << 20, Duration.ofMinutes(11)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.LEAKED, false, "families.pythonShm.reap is off"),
        row(FamilyCase.of("CUDA MPS files stay denied on a dead volume")
            .file("cuda.shm.1", 1 << 20, Duration.ofSeconds(20)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.IGNORED, false, "reap.deny has cuda.shm.*"),
        row(FamilyCase.of("a file no family or pattern names stays ignored on a dead volume")
            .file("model.bin", 1 << 20, Duration.ofSeconds(20)).onVolumeAt(VOLUME).afterContainer(4100),
            Verdict.IGNORED, false, "no reap.patterns entry matches"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void judgedOnAVolumeWhoseWritersHaveExited(FamilyRow row) {
    row.check();
  }
}
