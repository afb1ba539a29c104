package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.MIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.ShmMount;
import org.shmguard.gpu.NcclVersion;

class ShmSizeCheckTest {
  @TempDir Path root;

  @Test
  void fourRanksNeedMoreThanDockersDefault64Mb() {
    ShmNeed need = ShmNeed.of(4, NcclVersion.of(2, 21, 5));

    assertThat(need.transportBytes()).isEqualTo(4L * 2 * (9_637_892 + 4_100)).isGreaterThan(64 * MIB);
    assertThat(need.poolBytes()).isEqualTo(4L * (7_340_384 + 4));
    assertThat(need.recommendedGib()).isEqualTo(1);
  }

  @Test
  void dockerContainerOf64MbIsTooSmallForItsFourGpus() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06").containerDevices(4242, List.of(0, 1, 2, 3), List.of());
    host.containerShm(90, 4242, "docker:0123456789ab", 64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.severity()).isEqualTo(Severity.ERROR);
    assertThat(f.subject()).isEqualTo("docker:0123456789ab:/dev/shm");
    assertThat(f.summary()).contains("is 64.0M; 4 NCCL ranks need at least 73.6M")
        .contains("failed to extend /dev/shm/nccl-XXXXXX to 9637892 bytes");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("the container sees 4 GPU(s): /dev/nvidia0"));
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("4 ranks x 2 channels x (9,637,892 + 4,100)"));
    assertThat(f.fix().get(0)).contains("docker run --shm-size=1g");
    assertThat(f.fix()).anySatisfy(l -> assertThat(l).contains("nsenter -t 4242 -m mount -o remount,size=1G /dev/shm"));
  }

  @Test
  void podWithoutAnEmptyDirIsToldToMountAMemoryEmptyDirWithASizeLimit() {
    HostFixture host = new HostFixture(root).gpus(2, "550.54.15").containerDevices(77, List.of(0, 1), List.of());
    host.containerShm(91, 77, "pod:1b4e28ba-2fa1-11d2-883f-0016d3cca427", 64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(String.join("\n", f.fix())).contains("emptyDir: {medium: Memory, sizeLimit: 1Gi}")
        .contains("mountPath: /dev/shm").contains("memory limit");
  }

  @Test
  void podWhoseEmptyDirIsTooSmallIsToldToRaiseItsSizeLimit() {
    HostFixture host = new HostFixture(root).gpus(8, "550.54.15").containerDevices(78, List.of(0, 1, 2, 3, 4, 5, 6, 7), List.of());
    host.podEmptyDir(92, 78, "pod:1b4e28ba-2fa1-11d2-883f-0016d3cca427", 128 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.fix().get(0)).isEqualTo("raise the sizeLimit of the memory-backed emptyDir the pod mounts at /dev/shm to 1Gi");
    assertThat(f.fix()).anySatisfy(l -> assertThat(l).startsWith("for the running container, until it restarts: mount -o remount,size=1G /var/lib/kubelet/"));
  }

  @Test
  void smallHostDevShmIsToldToRemountAndAddAnFstabLine() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06");
    host.hostShm(64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.severity()).isEqualTo(Severity.ERROR);
    assertThat(f.fix()).startsWith("mount -o remount,size=1G /dev/shm",
        "keep it across reboots with this line in /etc/fstab: tmpfs  /dev/shm  tmpfs  rw,nosuid,nodev,size=1G  0  0");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("this host has 4 GPU(s) in /proc/driver/nvidia/gpus"));
  }

  @Test
  void insideAPodmanContainerItsOwnDevShmIsToldToBeRecreatedLargerNotRemountedOrPutInFstab() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06").file("/run/.containerenv", "engine=\"podman-4.3.1\"\n");
    host.hostShm(64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.severity()).isEqualTo(Severity.ERROR);
    assertThat(f.fix().get(0)).isEqualTo("this /dev/shm is this podman container's own: recreate the container with more"
        + " shared memory: podman run --shm-size=1g ...");
    assertThat(f.fix().get(1)).startsWith("for the running container, until it restarts: on the host, as root, shmguard doctor");
    assertThat(String.join("\n", f.fix())).doesNotContain("/etc/fstab").doesNotContain("mount -o remount");
  }

  @Test
  void insideADockerContainerTheFixIsDockersShmSize() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06").file("/.dockerenv", "");
    host.hostShm(64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.fix().get(0)).contains("docker run --shm-size=1g ...  (Compose: shm_size: \"1gb\")");
  }

  @Test
  void hostWithoutGpuAssumesEightRanksSaysSoAndOnlyWarns() {
    HostFixture host = new HostFixture(root);
    host.hostShm(64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("8 NCCL ranks");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e)
        .contains("no NVIDIA GPU found in /proc/driver/nvidia/gpus: assuming 8 local ranks").contains("--ranks N"));
  }

  @Test
  void containerThatSeesNoGpuOnAGpuHostIsNotSizedButListed() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06").containerDevices(500, List.of(), List.of());
    host.containerShm(93, 500, "docker:aaaaaaaaaaaa", 64 * MIB, 0);

    List<Finding> found = new ShmSizeCheck().run(host.context());

    Finding f = only(found, "shm-not-checked");
    assertThat(f.severity()).isEqualTo(Severity.INFO);
    assertThat(f.evidence().get(0)).contains("docker:aaaaaaaaaaaa:/dev/shm");
  }

  @Test
  void ranksOptionOverridesTheGpuCount() {
    HostFixture host = new HostFixture(root).gpus(8, "570.124.06").ranks(2);
    host.hostShm(64 * MIB, 0);

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    // 2 ranks fit the SHM transport (38.6M) in 64M, not with two 34M proxy pools.
    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("room for the SHM transport of 2 ranks");
  }

  @Test
  void bigMountFilledByLeaksIsFullAndPointsToClean() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06");
    ShmMount shm = host.hostShm(2 * GIB, 2 * GIB - 20 * MIB);
    for (int i = 0; i < 3; i++) {
      host.segment(shm, "nccl-Leak0" + i, 9_637_892, 1001, Duration.ofHours(3));
    }

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-full");

    assertThat(f.severity()).isEqualTo(Severity.ERROR);
    assertThat(f.summary()).contains("has only 20.0M free of 2.0G");
    assertThat(f.fix().get(0)).startsWith("shmguard clean").contains("27.6M");
  }

  @Test
  void mountWithRoomToSpareIsClean() {
    HostFixture host = new HostFixture(root).gpus(8, "570.124.06");
    host.hostShm(32 * GIB, 100 * MIB);

    assertThat(new ShmSizeCheck().run(host.context())).isEmpty();
  }

  @Test
  void containerWithoutSysNiceIsToldItsShmBuffersStayFiles() {
    HostFixture host = new HostFixture(root).gpus(4, "570.124.06").containerDevices(4343, List.of(0, 1, 2, 3), List.of());
    host.containerShm(91, 4343, "docker:fedcba987654", 64 * MIB, 0);
    // Docker's default capabilities and seccomp filter, as /proc/PID/status shows them
    host.file("/proc/4343/status", "Name:\tpython3\nCapEff:\t00000000a80425fb\nCapBnd:\t00000000a80425fb\nSeccomp:\t2\n");

    Finding f = only(new ShmSizeCheck().run(host.context()), "shm-too-small");

    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("pid 4343 there has a seccomp filter, CAP_SYS_NICE not in"
        + " the bounding set").contains("cuMem host memory cannot work here").contains("--cap-add SYS_NICE"));
  }
}
