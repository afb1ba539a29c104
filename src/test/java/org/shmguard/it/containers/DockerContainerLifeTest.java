package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Docker;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * A real Docker container's life (20.10, {@link Docker}) under the daemon: a rank SIGKILLed while
 * its container runs leaves its NCCL file in the container's own /dev/shm, which the daemon reaps
 * while the container lives; Docker's {@code --restart} gives each round a new, empty tmpfs, so no
 * leak is carried over; and seed 000 as Docker makes it ({@code --shm-size=64m}, four GPUs' device
 * nodes), where the doctor names the shortfall and Docker's own fixes. One dockerd serves the class.
 */
class DockerContainerLifeTest {
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
  void aKilledRanksFileIsReapedWhileItsContainerRuns() throws Exception {
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 1s\nruntimes:\n  kubeletRoot: \"\"\n  dockerRoot: " + docker.dataRoot()
        + "\n  containerStorage: []\n");
    try (Journald journald = Journald.start()) {
      String id = docker.runDetached(List.of("--name", "ranks", "--shm-size=64m"), "sh", "-c",
          "sh -c 'head -c 9000 /dev/zero > /dev/shm/nccl-Dkr001; exec 3</dev/shm/nccl-Dkr001; exec sleep 601' & exec sleep 600");
      String label = "docker:" + id.substring(0, 12);
      try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), JournalAlertSink.choose(),
          ServiceNotifier.none())) {
        long rank = rankPid(id);
        Thread.sleep(3_000); // the daemon sees the rank hold its file
        assertThat(docker.ok("exec", id, "ls", "/dev/shm")).isEqualTo("nccl-Dkr001");
        ProcessHandle.of(rank).orElseThrow().destroyForcibly(); // SIGKILL: NCCL's teardown never runs

        Eventually.until("the reap in the journal", Duration.ofSeconds(60),
            () -> !Journald.entries("SHM_SEGMENT", "nccl-Dkr001").isEmpty());
        JsonNode e = Journald.entries("SHM_SEGMENT", "nccl-Dkr001").get(0);
        assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
        assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo(label);
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(label + ":/dev/shm");
        assertThat(docker.ok("exec", id, "ls", "/dev/shm")).isEmpty();
        assertThat(docker.ok("inspect", "-f", "{{.State.Running}}", id)).as("the container still runs").isEqualTo("true");
      } finally {
        docker.ok("rm", "-f", id);
      }
    }
  }

  /**
   * {@code --restart=on-failure}: each round of a crashing container starts on a new, empty tmpfs
   * (20.10's default IPC mode, private), so what one round left is gone at the next, with nothing
   * for shmguard to do.
   */
  @Test
  void aRestartRoundStartsOnAnEmptyShmWhatEverTheLastRoundLeft() throws Exception {
    String id = docker.runDetached(List.of("--restart=on-failure:2", "--shm-size=64m"), "sh", "-c",
        "echo \"round sees: [$(ls /dev/shm)]\"; head -c 9000 /dev/zero > /dev/shm/nccl-Rst001; exit 1");
    try {
      Eventually.until("three rounds, then stopped", Duration.ofSeconds(60),
          () -> docker.ok("inspect", "-f", "{{.RestartCount}} {{.State.Running}}", id).equals("2 false"));
      List<String> rounds = docker.client("logs", id).out().lines().toList();
      assertThat(rounds).containsExactly("round sees: []", "round sees: []", "round sees: []");
    } finally {
      docker.ok("rm", "-f", id);
    }
  }

  /**
   * Seed 000 as Docker makes it: a 64 MB /dev/shm ({@code --shm-size=64m}) for a 4-GPU job (here
   * /dev/null under the names /dev/nvidia0..3, as the build machine has no GPU). The doctor, run on
   * the host, counts the container's GPUs, names the shortfall and Docker's fixes.
   */
  @Test
  void theDoctorNamesSeed000sShortfallWithDockersOwnFixes() throws Exception {
    List<String> options = new ArrayList<>(List.of("--shm-size=64m", "-e", "NVIDIA_VISIBLE_DEVICES=0,1,2,3"));
    for (int gpu = 0; gpu < 4; gpu++) {
      options.addAll(List.of("--device", "/dev/null:/dev/nvidia" + gpu));
    }
    String id = docker.runDetached(options, "sleep", "600");
    try {
      String label = "docker:" + id.substring(0, 12);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\nruntimes:\n"
          + "  kubeletRoot: \"\"\n  dockerRoot: " + docker.dataRoot() + "\n  containerStorage: []\n");
      CliRun doctor = CliRun.of("doctor", "--nccl-version", "2.21.5", "-c", config.toString());
      System.out.println("shmguard doctor beside a Docker container:\n" + doctor.out());
      assertThat(doctor.status()).as(doctor.out() + doctor.err()).isEqualTo(1);
      assertThat(doctor.out()).contains("[shm-too-small] " + label + ":/dev/shm is 64.0M; 4 NCCL ranks need at least 73.6M"
          + " for the SHM transport alone")
          .contains("the container sees 4 GPU(s): /dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3")
          .contains("recreate the container with more shared memory: docker run --shm-size=1g ...")
          .contains("or with the host's /dev/shm: docker run --ipc=host ...")
          .containsPattern("for the running container, until it restarts: nsenter -t " + docker.pid(id)
              + " -m mount -o remount,size=1G /dev/shm\n");
    } finally {
      docker.ok("rm", "-f", id);
    }
  }

  /** The host pid of the container's rank: its process running {@code sleep 601}. */
  private static long rankPid(String id) throws Exception {
    long[] found = {0};
    Eventually.until("the rank running", Duration.ofSeconds(30), () -> {
      found[0] = ProcessHandle.allProcesses().mapToLong(ProcessHandle::pid)
          .filter(pid -> read(pid, "cmdline").equals("sleep\0" + "601\0") && read(pid, "cgroup").contains(id)).findFirst().orElse(0);
      return found[0] > 0;
    });
    return found[0];
  }

  private static String read(long pid, String file) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(pid), file));
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
