package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Podman;
import org.shmguard.testing.TestConfig;

/**
 * A real podman container (4.3, runc) with a /dev/shm of its own, which podman mounts on the host at
 * {@code <graph root>/overlay-containers/<id>/userdata/shm}: the daemon finds it there, named from
 * the storage's containers.json, reaps a dead rank's NCCL file in it with the journal naming the
 * container, and when the container exits, podman's own cleanup unmounts it (before the container
 * is removed): it is no longer watched.
 */
class PodmanShmVolumeTest {
  @Test
  void aContainersShmIsFoundWhereTheRuntimeMountsItNamedAndReapedInUntilPodmanUnmountsItAtExit() throws Exception {
    try (Journald journald = Journald.start(); Podman podman = Podman.create()) {
      Process container = podman.runKept(List.of("-i", "--name", "trainer", "--shm-size=8m"), "sh", "-c",
          "head -c 9000 /dev/zero > /dev/shm/nccl-Pdm001; echo ready; read line; echo bye");
      BufferedReader out = new BufferedReader(new InputStreamReader(container.getInputStream(), StandardCharsets.UTF_8));
      assertThat(out.readLine()).isEqualTo("ready");
      Thread.sleep(1_200); // older than the grace
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
          + "daemon:\n  interval: 1s\n  rediscover: 1s\nruntimes:\n  kubeletRoot: \"\"\n  dockerRoot: \"\"\n"
          + "  containerStorage: [" + podman.storage() + "]\n");
      try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), JournalAlertSink.choose(),
          ServiceNotifier.none())) {
        Eventually.until("the reap in the journal", Duration.ofSeconds(60),
            () -> !Journald.entries("SHM_SEGMENT", "nccl-Pdm001").isEmpty());
        JsonNode e = Journald.entries("SHM_SEGMENT", "nccl-Pdm001").get(0);
        String id = e.get("SHM_CONTAINER_ID").asText();
        assertThat(id).matches("[0-9a-f]{64}");
        assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
        assertThat(e.get("SHM_RUNTIME").asText()).isEqualTo("podman");
        assertThat(e.get("SHM_CONTAINER_NAME").asText()).isEqualTo("trainer");
        assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo("podman:" + id.substring(0, 12));
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo("podman:" + id.substring(0, 12) + ":/dev/shm");
        assertThat(e.get("MESSAGE").asText()).endsWith("[podman container trainer]");
        Path shm = podman.storage().resolve("overlay-containers").resolve(id).resolve("userdata/shm");
        assertThat(Files.readAllLines(Path.of("/proc/self/mountinfo"))).anyMatch(l -> l.contains(" " + shm + " "));

        container.getOutputStream().write("\n".getBytes(StandardCharsets.UTF_8));
        container.getOutputStream().flush();
        assertThat(container.waitFor(60, TimeUnit.SECONDS)).as("the container exited").isTrue();
        Eventually.until("podman's cleanup unmounts the container's shm", Duration.ofSeconds(60),
            () -> readMountinfo().noneMatch(l -> l.contains(" " + shm + " ")));
        Eventually.until("the mount no longer watched", Duration.ofSeconds(60),
            () -> Journald.entries("SHMGUARD_EVENT", "mount_removed").stream()
                .anyMatch(r -> r.has("SHM_CONTAINER_NAME") && r.get("SHM_CONTAINER_NAME").asText().equals("trainer")));
        assertThat(Files.exists(podman.storage().resolve("overlay-containers").resolve(id))).as("the container is not removed")
            .isTrue();
      }
    }
  }

  private static java.util.stream.Stream<String> readMountinfo() {
    try {
      return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
