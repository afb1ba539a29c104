package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Workload;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * Naming a runtime's tmpfs from the runtime's own files, under a host root of real directories:
 * a pod from kubelet's log directory, a Docker container from its config.v2.json, a podman
 * container and a CRI-O sandbox's pod from containers.json; a name once read is kept for its
 * mount; and what another user made or may write is never believed.
 */
class WorkloadNamesTest {
  private static final String UID = "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718";
  private static final String ID = "0123456789ab".repeat(5) + "0123";
  private static final String ID2 = "fedcba987654".repeat(5) + "3210";
  private static final String STORAGE = "/var/lib/containers/storage";
  private Path root;

  @BeforeEach
  void hostRoot() throws IOException {
    Sandbox.require();
    root = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "names-");
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void remove() {
    if (root != null) {
      Cmd.run("rm", "-rf", root.toString());
    }
  }

  @Test
  void aPodIsNamedFromKubeletsLogDirectoryAndTheNameIsKeptForItsMount() throws IOException {
    Path logs = Files.createDirectories(root.resolve("var/log/pods/training_llama-0_" + UID));
    WorkloadNames names = names();

    assertThat(names.name(7, Workload.pod(UID, "dshm"), "", "").describe()).isEqualTo("pod training/llama-0");

    Files.delete(logs);
    assertThat(names.name(7, Workload.pod(UID, "dshm"), "", "").describe()).as("kept for mount 7").isEqualTo("pod training/llama-0");
    names.keepOnly(Set.of());
    assertThat(names.name(7, Workload.pod(UID, "dshm"), "", "").describe()).isEqualTo("pod uid " + UID);
  }

  @Test
  void aPodLogEntryAnotherUserMadeOrALinkIsNotBelieved() throws IOException {
    Path logs = Files.createDirectories(root.resolve("var/log/pods"));
    Cmd.run("chown", "65534:65534", Files.createDirectory(logs.resolve("training_llama-0_" + UID)).toString());
    String uid2 = UID.replace('1', '2');
    Files.createSymbolicLink(logs.resolve("training_llama-1_" + uid2), logs);

    assertThat(names().name(1, Workload.pod(UID, "dshm"), "", "").hasName()).isFalse();
    assertThat(names().name(2, Workload.pod(uid2, "dshm"), "", "").hasName()).isFalse();
  }

  @Test
  void aDockerContainerIsNamedFromItsConfigOnlyWhileRootAloneMayWriteIt() throws IOException {
    Path config = Files.createDirectories(root.resolve("var/lib/docker/containers/" + ID)).resolve("config.v2.json");
    Files.writeString(config, "{\"ID\":\"" + ID + "\",\"Config\":{\"Name\":\"inner\"},\"Name\":\"/trainer\"}");
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));

    assertThat(names().name(1, Workload.container(Workload.DOCKER, ID), "", "").describe())
        .isEqualTo("docker container trainer");

    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(names().name(1, Workload.container(Workload.DOCKER, ID), "", "").describe())
        .isEqualTo("docker container 0123456789ab");

    // another user's file (root may not have written it), and a link to root's own: neither names it
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
    Cmd.run("chown", "65534:65534", config.toString());
    assertThat(names().name(2, Workload.container(Workload.DOCKER, ID), "", "").describe())
        .isEqualTo("docker container 0123456789ab");
    Cmd.run("chown", "0:0", config.toString());
    Path elsewhere = Files.move(config, config.resolveSibling("elsewhere.json"));
    Files.createSymbolicLink(config, elsewhere);
    assertThat(names().name(3, Workload.container(Workload.DOCKER, ID), "", "").describe())
        .isEqualTo("docker container 0123456789ab");
  }

  @Test
  void aPodmanContainerIsNamedFromContainersJsonAndACrioSandboxGivesItsPod() throws IOException {
    Path json = Files.createDirectories(root.resolve(STORAGE.substring(1) + "/overlay-containers")).resolve("containers.json");
    Files.writeString(json, "[{\"id\":\"" + ID + "\",\"names\":[\"trainer\"]},"
        + "{\"id\":\"" + ID2 + "\",\"names\":[\"k8s_POD_llama-0_training_" + UID + "_0\"]}]");
    Files.setPosixFilePermissions(json, PosixFilePermissions.fromString("rw-------"));
    WorkloadNames names = names();

    assertThat(names.name(1, Workload.container(Workload.PODMAN, ID), STORAGE, "overlay-containers").describe())
        .isEqualTo("podman container trainer");
    assertThat(names.name(2, Workload.container(Workload.CRIO, ID2), STORAGE, "overlay-containers").describe())
        .isEqualTo("pod training/llama-0");
    assertThat(names.name(3, Workload.container(Workload.PODMAN, ID.replace('0', 'f')), STORAGE, "overlay-containers")
        .hasName()).isFalse();
  }

  /**
   * A pod's /dev/shm found through its processes (containerd's sandbox shm, shown by the pause
   * process) is named from the pod log directory like an emptyDir, without a volume; a mount only
   * reported, another runtime's, a pod kubelet has no log directory for, or no pod log directory
   * configured, keep their labels alone.
   */
  @Test
  void aPodsShmFoundThroughItsProcessesIsNamedFromTheLogDirectoryToo() throws IOException {
    Files.createDirectories(root.resolve("var/log/pods/inference_engine-0_" + UID));
    String other = "2f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718";
    Map<Dev, ShmMount> found = new LinkedHashMap<>();
    found.put(Dev.of(0, 50), viaProcesses(50, "pod:" + UID, null));
    found.put(Dev.of(0, 51), viaProcesses(51, "pod:" + UID, "a namespace another user owns"));
    found.put(Dev.of(0, 52), viaProcesses(52, "docker:" + ID.substring(0, 12), null));
    found.put(Dev.of(0, 53), viaProcesses(53, "pod:" + other, null));

    Map<Dev, ShmMount> unnamed = new LinkedHashMap<>(found);
    new RuntimeVolumes(HostPaths.of(root.toString()), new RuntimeRoots("/var/lib/kubelet", "", "", List.of())).namePods(unnamed);
    assertThat(unnamed).isEqualTo(found);

    new RuntimeVolumes(HostPaths.of(root.toString()), RuntimeRoots.DEFAULTS).namePods(found);
    ShmMount pod = found.get(Dev.of(0, 50));
    assertThat(pod.workload().details()).isEqualTo("pod inference/engine-0 (uid " + UID + ")");
    assertThat(pod.workload().runtime()).isEqualTo(Workload.KUBERNETES);
    assertThat(pod.container()).isEqualTo("pod:" + UID);
    assertThat(pod.origin()).isEqualTo(MountOrigin.NAMESPACE);
    assertThat(found.get(Dev.of(0, 51)).workload()).as("only reported").isNull();
    assertThat(found.get(Dev.of(0, 52)).workload()).isNull();
    assertThat(found.get(Dev.of(0, 53)).workload()).as("no log directory of its pod").isNull();
  }

  private static ShmMount viaProcesses(int mountId, String label, String reportOnly) {
    return new ShmMount(Dev.of(0, mountId), "/proc/" + (1000 + mountId) + "/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE,
        "rw,size=65536k", "mnt:[" + (4026532000L + mountId) + "]", List.of(1000 + mountId), label, null, mountId,
        "/proc/" + (1000 + mountId) + "/mountinfo", reportOnly, 0L);
  }

  private WorkloadNames names() {
    return new WorkloadNames(HostPaths.of(root.toString()), RuntimeRoots.DEFAULTS);
  }
}
