package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Workload;

/** Which host mount points are a runtime's pod or container shm, by their shape alone (no kernel, no root). */
class RuntimeVolumesTest {
  private static final String UID = "0d6f3c1e-8a2b-4c5d-9e7f-1234567890ab";
  private static final String ID = "d70d4d02febefc37abfa7abc15836dee99e6dbaa09e047a61654ef08baeabc68";

  private static RuntimeVolumes.Shape shape(String mountPoint) {
    return RuntimeVolumes.shapeOf(mountPoint, RuntimeRoots.DEFAULTS, Map.of());
  }

  @Test
  void aKubeletMemoryEmptyDirIsThePodsVolumeByItsUid() {
    RuntimeVolumes.Shape s = shape("/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm");
    assertThat(s.workload()).isEqualTo(Workload.pod(UID, "dshm"));
    assertThat(s.workload().label()).isEqualTo("pod:" + UID);
    assertThat(s.mountPoint()).isEqualTo("/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm");
  }

  @Test
  void dockerAndPodmanShmAreTheContainersSeenAtDevShm() {
    RuntimeVolumes.Shape docker = shape("/var/lib/docker/containers/" + ID + "/mounts/shm");
    assertThat(docker.workload()).isEqualTo(Workload.container("docker", ID));
    assertThat(docker.mountPoint()).isEqualTo("/dev/shm");
    assertThat(docker.workload().label()).isEqualTo("docker:d70d4d02febe");

    RuntimeVolumes.Shape podman = shape("/var/lib/containers/storage/overlay-containers/" + ID + "/userdata/shm");
    assertThat(podman.workload()).isEqualTo(Workload.container("podman", ID));
    assertThat(podman.storageRoot()).isEqualTo("/var/lib/containers/storage");
    assertThat(podman.driverDir()).isEqualTo("overlay-containers");
    RuntimeVolumes.Shape crio = shape("/run/containers/storage/overlay-containers/" + ID + "/userdata/shm");
    assertThat(crio.storageRoot()).isEqualTo("/run/containers/storage");
  }

  @Test
  void mountsOfOtherShapesAreNoRuntimesVolume() {
    assertThat(List.of(
        "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~secret/token",            // a secret, not an emptyDir
        "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~projected/kube-api-access",
        "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm/inner",     // deeper
        "/var/lib/kubelet/pods/" + UID.toUpperCase() + "/volumes/kubernetes.io~empty-dir/dshm", // kubelet writes lower case
        "/var/lib/kubelet/pods/not-a-uid/volumes/kubernetes.io~empty-dir/dshm",
        "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/Bad_Name",
        "/var/lib/kubelet-other/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm",    // another root
        "/var/lib/docker/containers/" + ID.substring(1) + "/mounts/shm",                   // 63 digits
        "/var/lib/docker/containers/" + ID + "/mounts/shm2",
        "/var/lib/containers/storage/overlay-containers/" + ID + "/userdata/shm/x",
        "/var/lib/containers/storage/../storage/overlay-containers/" + ID + "/userdata/shm",
        "/dev/shm"))
        .allSatisfy(p -> assertThat(shape(p)).as(p).isNull());
  }

  @Test
  void aConfiguredRootIsMatchedWhereItsLinksLeadAndARuntimeLeftOutMatchesNothing() {
    RuntimeRoots roots = new RuntimeRoots("/srv/kubelet", "/var/log/pods", "", List.of());
    String mp = "/mnt/disk1/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm";
    assertThat(RuntimeVolumes.shapeOf(mp, roots, Map.of("/srv/kubelet", "/mnt/disk1/kubelet"))).isNotNull();
    assertThat(RuntimeVolumes.shapeOf(mp, roots, Map.of())).isNull();
    assertThat(RuntimeVolumes.shapeOf("/var/lib/docker/containers/" + ID + "/mounts/shm", roots, Map.of())).isNull();
  }

  /**
   * What an ordinary user can put at a volume's path (KubeletCrashLoopTest tries it on a real
   * kubelet): a FUSE mount (fusermount3 mounts on a directory they may write) or a bind of one
   * of a tmpfs's directories is never a pod's volume, and a tmpfs of the right shape that cannot
   * be reached on a handle is reported, not watched. The host root is an empty fixture: nothing
   * of the machine's is read.
   */
  @Test
  void aFuseMountOrABindOfATmpfsDirectoryAtAVolumePathIsNoPodsVolume(@TempDir Path hostRoot) {
    String dir = "/var/lib/kubelet/pods/" + UID + "/volumes/kubernetes.io~empty-dir/dshm";
    List<MountEntry> own = MountEntry.parseAll(String.join("\n",
        "900 30 0:99 / " + dir + " rw,nosuid,nodev,relatime - fuse.fusefix fusefix rw,user_id=65534,group_id=65534",
        "901 30 0:98 /sub " + dir.replace("dshm", "dshm2") + " rw,relatime - tmpfs tmpfs rw,size=1024k",
        "902 30 0:97 / " + dir.replace("dshm", "dshm3") + " rw,relatime - tmpfs tmpfs rw,size=1024k", ""));
    assertThat(own).hasSize(3);
    Map<Dev, ShmMount> found = new HashMap<>();
    List<String> warnings = new ArrayList<>();
    new RuntimeVolumes(HostPaths.of(hostRoot.toString()), RuntimeRoots.DEFAULTS).discover(own, "mnt:[1]", "mountinfo",
        found, warnings);
    assertThat(found).isEmpty();
    assertThat(warnings).singleElement()
        .satisfies(w -> assertThat(w).contains(dir.replace("dshm", "dshm3") + " cannot be reached; not watched"));
  }

  @Test
  void crioSandboxNamesGiveTheirPod() {
    Workload c = Workload.container("podman", ID);
    Workload pod = WorkloadNames.crioSandbox(c, "k8s_POD_llama-0_training_" + UID + "_0");
    assertThat(pod.describe()).isEqualTo("pod training/llama-0");
    assertThat(pod.label()).isEqualTo("pod:" + UID);
    assertThat(pod.runtime()).isEqualTo("crio");
    assertThat(pod.containerId()).isEqualTo(ID);
    assertThat(WorkloadNames.crioSandbox(c, "trainer")).isNull();
    assertThat(WorkloadNames.crioSandbox(c, "k8s_POD_Llama_training_" + UID + "_0")).isNull();
  }

  @Test
  void workloadNamesOfShapesNoRuntimeAllowsAreRefused() {
    Workload pod = Workload.pod(UID, "dshm");
    assertThatThrownBy(() -> pod.named("training", "llama 0")).hasMessageContaining("podName");
    assertThatThrownBy(() -> pod.named("Training", "llama-0")).hasMessageContaining("podNamespace");
    assertThatThrownBy(() -> Workload.container("docker", ID).named("/etc\nx")).hasMessageContaining("containerName");
    assertThatThrownBy(() -> Workload.container("docker", "abc")).hasMessageContaining("containerId");
    assertThat(pod.named("training", "llama-0").details())
        .isEqualTo("pod training/llama-0 (uid " + UID + ", emptyDir dshm)");
    assertThat(Workload.container("docker", ID).details()).isEqualTo("docker container d70d4d02febe (id " + ID + ")");
  }
}
