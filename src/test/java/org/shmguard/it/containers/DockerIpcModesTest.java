package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Docker;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * Where a real Docker (20.10, {@link Docker}) puts a container's /dev/shm for each IPC mode, and
 * that shmguard finds it there, names it and reaps in it: {@code --ipc=private} (the default: a
 * tmpfs in the container's mount namespace only, reached through /proc/PID/root),
 * {@code --ipc=shareable} ({@code <data-root>/containers/<id>/mounts/shm} on the host, named from
 * Docker's config.v2.json), {@code --ipc=container:<owner>} (the owner's tmpfs, which lives on,
 * detached, in a joiner that outlives the owner) and {@code --ipc=host} (the host's /dev/shm, with
 * holders in the container's own PID namespace). One dockerd serves the class.
 */
class DockerIpcModesTest {
  private static final long MIB = 1L << 20;
  private static Docker docker;

  @BeforeAll
  static void startDocker() {
    Sandbox.require();
    assumeTrue(Docker.installed(), "needs docker.io (dockerd 20.10, /usr/sbin/dockerd)");
    docker = Docker.start();
  }

  @AfterAll
  static void stopDocker() {
    if (docker != null) {
      docker.close();
    }
  }

  @Test
  void aPrivateIpcShmLivesOnlyInTheContainersMountNamespaceAndIsFoundThroughItsRoot() throws Exception {
    String id = docker.runDetached(List.of("--shm-size=64m"), "sh", "-c", "echo x > /dev/shm/nccl-Prv001; exec sleep 600");
    try {
      int pid = docker.pid(id);
      JsonNode m = mountOf(CliRun.scanJson(config()), "docker:" + id.substring(0, 12));
      assertThat(m.get("origin").asText()).isEqualTo("namespace");
      assertThat(m.get("path").asText()).isEqualTo("/proc/" + pid + "/root/dev/shm");
      assertThat(m.get("mountPoint").asText()).isEqualTo("/dev/shm");
      assertThat(m.get("sizeBytes").asLong()).isEqualTo(64 * MIB);
      assertThat(m.get("largest").get(0).get("name").asText()).isEqualTo("nccl-Prv001");
      assertThat(hostMountinfo()).as("nothing of it in the host's mount table").doesNotContain(id);
      assertThat(Files.exists(docker.dataRoot().resolve("containers").resolve(id).resolve("mounts/shm/nccl-Prv001"))).isFalse();
      assertThat(Files.exists(Path.of("/dev/shm/nccl-Prv001"))).isFalse();
    } finally {
      docker.ok("rm", "-f", id);
    }
  }

  @Test
  void aShareableShmIsFoundAtTheDataRootNamedFromDockersConfigAndGoneWhenTheContainerStops() throws Exception {
    String id = docker.runDetached(List.of("--name", "trainer", "--ipc=shareable"), "sh", "-c",
        "echo x > /dev/shm/nccl-Shr001; exec sleep 600");
    try {
      Path shm = docker.dataRoot().resolve("containers").resolve(id).resolve("mounts/shm");
      assertThat(hostMountinfo()).contains(" " + shm + " ");
      JsonNode m = CliRun.mountAt(CliRun.scanJson(config()), shm);
      assertThat(m.get("origin").asText()).isEqualTo("volume");
      assertThat(m.get("container").asText()).isEqualTo("docker:" + id.substring(0, 12));
      assertThat(m.get("workload").get("containerName").asText()).isEqualTo("trainer");
      assertThat(m.get("workload").get("containerId").asText()).isEqualTo(id);
      assertThat(m.get("largest").get(0).get("name").asText()).isEqualTo("nccl-Shr001");

      docker.ok("stop", "-t", "1", id);
      assertThat(hostMountinfo()).as("dockerd unmounts it at stop").doesNotContain(" " + shm + " ");
      assertThat(paths(CliRun.scanJson(config()))).doesNotContain(shm.toString());
    } finally {
      docker.ok("rm", "-f", id);
    }
    assertThat(Files.exists(docker.dataRoot().resolve("containers").resolve(id))).as("removed at rm").isFalse();
  }

  /**
   * The owner of a shareable IPC namespace stops while a joiner runs: dockerd unmounts the owner's
   * path, but the tmpfs lives on in the joiner's mount namespace, with what the owner left. It is
   * found there, as the joiner's, and the owner's leaked NCCL file is reaped in it.
   */
  @Test
  void anOwnersTmpfsDetachedUnderARunningJoinerIsStillFoundAndItsLeakReaped() throws Exception {
    String owner = docker.runDetached(List.of("--ipc=shareable"), "sh", "-c", "echo x > /dev/shm/nccl-Own001; exec sleep 600");
    String joiner = docker.runDetached(List.of("--ipc=container:" + owner), "sleep", "600");
    try {
      Path shm = docker.dataRoot().resolve("containers").resolve(owner).resolve("mounts/shm");
      assertThat(docker.ok("exec", joiner, "ls", "/dev/shm")).isEqualTo("nccl-Own001");
      docker.ok("stop", "-t", "1", owner);
      assertThat(hostMountinfo()).doesNotContain(" " + shm + " ");
      assertThat(docker.ok("exec", joiner, "ls", "/dev/shm")).as("the joiner still sees it").isEqualTo("nccl-Own001");

      int pid = docker.pid(joiner);
      JsonNode m = mountOf(CliRun.scanJson(config()), "docker:" + joiner.substring(0, 12));
      assertThat(m.get("path").asText()).isEqualTo("/proc/" + pid + "/root/dev/shm");
      assertThat(m.get("largest").get(0).get("name").asText()).isEqualTo("nccl-Own001");

      Thread.sleep(1_100); // past the grace of 1s
      PassReport pass = Engine.create(TestConfig.load(config()), HostPaths.system()).clean(false);
      assertThat(pass.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals("nccl-Own001")).singleElement()
          .satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(docker.ok("exec", joiner, "ls", "/dev/shm")).isEmpty();
    } finally {
      docker.ok("rm", "-f", joiner, owner);
    }
  }

  /**
   * {@code --ipc=host} with the container's own PID namespace: the file is the host's /dev/shm's,
   * kept while a process of the container holds it, reaped once the container is killed.
   */
  @Test
  void aHostIpcContainersHolderKeepsItsFileOnTheHostsShmUntilTheContainerIsKilled() throws Exception {
    Path file = Path.of("/dev/shm/nccl-Hst001");
    String id = docker.runDetached(List.of("--ipc=host"), "sh", "-c",
        "head -c 9000 /dev/zero > /dev/shm/nccl-Hst001; exec 3</dev/shm/nccl-Hst001; exec sleep 600");
    try {
      Eventually.until("the container's file on the host's /dev/shm", Duration.ofSeconds(30), () -> Files.exists(file));
      int pid = docker.pid(id);
      assertThat(Files.readString(Path.of("/proc", Integer.toString(pid), "status"))).as("its own PID namespace")
          .containsPattern("NSpid:\\s+" + pid + "\\s+1\n");
      JsonNode scan = CliRun.scanJson(config());
      assertThat(StreamSupport.stream(scan.get("mounts").spliterator(), false)
          .filter(m -> m.path("container").asText().equals("docker:" + id.substring(0, 12)))).as("no mount of its own").isEmpty();
      Engine engine = Engine.create(TestConfig.load(config()), HostPaths.system());
      Thread.sleep(1_100);
      PassReport held = engine.clean(false);
      assertThat(held.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Hst001"));
      assertThat(held.judgement().segments()).filteredOn(a -> a.segment().displayName().equals("nccl-Hst001")).singleElement()
          .satisfies(a -> assertThat(a.reason()).isEqualTo("held by pid " + pid + " (fd)"));
      assertThat(Files.exists(file)).isTrue();

      docker.ok("kill", id);
      Eventually.until("the container's process gone", Duration.ofSeconds(30),
          () -> ProcessHandle.of(pid).isEmpty() || !ProcessHandle.of(pid).get().isAlive());
      PassReport gone = engine.clean(false);
      assertThat(gone.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals("nccl-Hst001")).singleElement()
          .satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(Files.exists(file)).isFalse();
    } finally {
      docker.client("rm", "-f", id);
      Files.deleteIfExists(file);
    }
  }

  static Path config() {
    return TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\nruntimes:\n"
        + "  kubeletRoot: \"\"\n  dockerRoot: " + docker.dataRoot() + "\n  containerStorage: []\n");
  }

  static JsonNode mountOf(JsonNode scan, String container) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.path("container").asText().equals(container)) {
        return m;
      }
    }
    throw new AssertionError(container + " has no mount among " + scan.get("mounts"));
  }

  private static List<String> paths(JsonNode scan) {
    return StreamSupport.stream(scan.get("mounts").spliterator(), false).map(m -> m.get("path").asText()).toList();
  }

  static String hostMountinfo() throws Exception {
    return Files.readString(Path.of("/proc/self/mountinfo"));
  }
}
