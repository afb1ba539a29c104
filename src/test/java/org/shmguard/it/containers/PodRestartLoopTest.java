package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.PodRestartLoop;
import org.shmguard.testing.Podman;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Seed 002 as a runtime makes it (issue 21): a pod's /dev/shm is a 64 MiB tmpfs bind-mounted into
 * successive real containers (podman, runc, the cached Debian python root); the engine fills it
 * with vLLM's offload region, SGLang's segments and NCCL's files, and crashes; a restart loop with
 * Kubernetes' back-off (scaled down tenfold) starts it again on the same volume. On the default
 * configuration (the volume named in {@code mounts:}, and the sandbox's own PID namespace
 * allowed) the daemon reaps what the crashed engine left before the next start, the loop ends in
 * a running container with at most one failed start, and the journal says what was reaped, why,
 * and in which container's volume. The same on a real kubelet's emptyDir, with the pod named:
 * KubeletCrashLoopTest (NCCL's files of seed 002, and vLLM's offload region of an ended
 * container).
 */
class PodRestartLoopTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void aCrashedEnginesLeakIsReapedBeforeItsRestartAndTheLoopEndsRunning() throws Exception {
    try (Journald journald = Journald.start(); TmpfsMount pod = TmpfsMount.create("size=64m,mode=1777")) {
      restartLoop(pod.path(), "mounts: [auto, " + pod.path() + "]\nreap:\n  requireHostPidNamespace: false\n",
          (e, container) -> assertThat(e.get("SHM_CONTAINER").asText()).as("the container").isEqualTo(container));
    }
  }

  private static void restartLoop(Path volume, String yaml, BiConsumer<JsonNode, String> entryNames) throws Exception {
    org.shmguard.testing.PythonRoot.prepare();
    assumeTrue(Files.isDirectory(Path.of("/usr/lib/python3.11/multiprocessing")), "needs the host's python3.11 library");
    try (Podman podman = Podman.onRoot(PodRestartLoop.ROOT)) {
      RecordingSink recorded = new RecordingSink();
      AlertSink journal = JournalAlertSink.choose();
      AlertSink both = new AlertSink() {
        @Override
        public void emit(Alert alert) {
          journal.emit(alert);
          recorded.emit(alert);
        }

        @Override
        public String describe() {
          return journal.describe();
        }
      };
      Path config = TestConfig.write(yaml);
      try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), both, ServiceNotifier.none())) {
        PodRestartLoop.Outcome o = new PodRestartLoop(podman, volume).run(() -> Eventually.until(
            "the engine's two processes watched", PATIENCE, () -> daemon.status().watchedHolders() >= 2), 5);
        try {
          assertThat(o.crashed().exitStatus()).as("the crash").isEqualTo(1);
          assertThat(o.endsRunning()).as("the loop ends in a running container: %s", o.restarts()).isTrue();
          assertThat(o.failedStarts()).as("failed starts: %s", o.restarts()).isLessThanOrEqualTo(1);

          String container = "podman:" + o.crashed().containerId().substring(0, 12);
          long lastReap = 0;
          for (String file : o.leftFiles()) {
            String name = Path.of(file).getFileName().toString();
            RecordingSink.Received r = recorded.awaitSegment(EventKind.SEGMENT_REAPED, name, PATIENCE);
            lastReap = Math.max(lastReap, r.nanoTime());
            assertThat(volume.resolve(name)).as(name + " reaped").doesNotExist();
            Eventually.until(name + " in the journal", PATIENCE,
                () -> !Journald.entries("SHM_SEGMENT", name).isEmpty());
            JsonNode e = Journald.entries("SHM_SEGMENT", name).stream()
                .filter(x -> x.get("SHMGUARD_EVENT").asText().equals("segment_reaped")).findFirst().orElseThrow();
            entryNames.accept(e, container);
            assertThat(e.get("MESSAGE").asText()).as("the message for " + name).contains(name);
            System.out.println("reaped " + name + ": " + e.get("SHM_REASON").asText());
            if (name.startsWith("sgl_shm_")) {
              assertThat(e.get("SHM_REASON").asText()).as("why " + name).contains("(from its name), has exited");
            }
            if (!name.startsWith("nccl-")) {
              // the offload region and SGLang's segments: only a dead volume lets them go by default
              assertThat(e.get("SHM_REASON").asText()).as("why " + name)
                  .contains("every writer of this volume has exited");
            }
          }
          assertThat(o.leftFiles()).as("what was left").hasSize(6);
          long firstRestart = o.restarts().get(0).startedNanos();
          System.out.printf("restart loop: reaped %d ms after the crash; first restart %d ms after it; %d of %d "
              + "restarts failed%n", (lastReap - o.crashNanos()) / 1_000_000, (firstRestart - o.crashNanos()) / 1_000_000,
              o.failedStarts(), o.restarts().size());
          assertThat(lastReap).as("reaped before the first restart (Kubernetes' first back-off is 10 s)")
              .isLessThan(firstRestart);
          try (var listing = Files.list(volume)) {
            assertThat(listing.map(p -> p.getFileName().toString()).toList())
                .as("the running engine's files, and none of the crashed one's").hasSize(6)
                .noneMatch(n -> o.leftFiles().stream().anyMatch(f -> f.endsWith("/" + n)));
          }
        } finally {
          if (o.running() != null) {
            o.running().getOutputStream().close();
            o.running().waitFor();
          }
        }
      }
    }
  }
}
