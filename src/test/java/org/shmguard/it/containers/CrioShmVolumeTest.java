package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * CRI-O's layout on the host, made in the sandbox (no CRI-O runs here): a pod sandbox's shm tmpfs
 * under the storage's run root, {@code <runroot>/overlay-containers/<id>/userdata/shm}, and the
 * graph root's {@code containers.json} naming that sandbox {@code k8s_POD_<name>_<namespace>_<uid>_<attempt>}:
 * the mount is the pod's, named, with the sandbox's id.
 */
class CrioShmVolumeTest {
  private static final String ID = "5b0e1f7c9d2a4e6b8c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b";
  private static final String UID = "7c4d2e1f-3a5b-4c6d-8e9f-0a1b2c3d4e5f";

  @Test
  void aCrioPodSandboxesShmUnderTheRunRootIsNamedAsItsPodFromTheGraphRootsContainersJson() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "crio-");
    Path graph = Files.createDirectories(dir.resolve("graph/overlay-containers"));
    Path shmDir = Files.createDirectories(dir.resolve("run/overlay-containers").resolve(ID).resolve("userdata/shm"));
    Files.writeString(graph.resolve("containers.json"), "[{\"id\":\"" + "0".repeat(64) + "\",\"names\":[\"other\"]},"
        + "{\"id\":\"" + ID + "\",\"names\":[\"k8s_POD_llama-0_training_" + UID + "_0\"],\"image\":\"\",\"metadata\":\"{}\"}]");
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\nruntimes:\n  kubeletRoot: \"\"\n"
        + "  dockerRoot: \"\"\n  containerStorage: [" + dir.resolve("graph") + ", " + dir.resolve("run") + "]\n");
    try (TmpfsMount shm = TmpfsMount.createAt(shmDir, "size=1m")) {
      JsonNode m = CliRun.mountAt(CliRun.scanJson(config), shmDir);
      assertThat(m.get("container").asText()).isEqualTo("pod:" + UID);
      JsonNode w = m.get("workload");
      assertThat(w.get("runtime").asText()).isEqualTo("crio");
      assertThat(w.get("podNamespace").asText()).isEqualTo("training");
      assertThat(w.get("podName").asText()).isEqualTo("llama-0");
      assertThat(w.get("containerId").asText()).isEqualTo(ID);
    } finally {
      Cmd.run("rm", "-rf", dir.toString());
    }
  }
}
