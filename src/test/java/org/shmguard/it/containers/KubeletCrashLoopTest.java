package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.KubeletNode;
import org.shmguard.testing.TestConfig;

/**
 * Seed 002 on a real kubelet ({@link KubeletNode}: kubelet 1.20.2, containerd 1.6's CRI, etcd
 * and kube-apiserver in the test's own namespaces). A pod's container starts, makes a 40 MiB
 * NCCL file in its /dev/shm (a 64 MiB tmpfs: a second such file cannot fit), holds it a moment
 * and exits 1 on its first two attempts; the kubelet restarts it itself (at once after the first
 * crash, after its 10 s back-off after the second). Each attempt counts itself and logs what it
 * found in /dev/shm and whether its file fit on a second emptyDir, on disk. The attempt starts
 * its NCCL work 3 s after it starts, as a training process does after its imports and CUDA's
 * start-up.
 *
 * <p>Without shmguard the second attempt finds the first one's file and no room. With the daemon
 * running (grace 2 s, passes every second) what each crashed attempt left is reaped before the
 * next attempt makes its own, the journal naming the pod, and the pod is Running at last with
 * its live file kept: for a {@code medium: Memory} emptyDir of {@code sizeLimit: 64Mi} at
 * /dev/shm (sized by the kubelet: feature gate SizeMemoryBackedVolumes) and for a pod without
 * one, whose /dev/shm is the sandbox's, which containerd keeps for the pod's life.
 */
class KubeletCrashLoopTest {
  private static final long MIB = 1024 * 1024;
  private static KubeletNode node;

  @BeforeAll
  static void startNode() throws Exception {
    node = KubeletNode.start();
  }

  @AfterAll
  static void stopNode() throws IOException {
    if (node != null) {
      node.close();
      assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).as("every mount of the node's gone")
          .doesNotContain("/var/lib/kubelet").doesNotContain("/var/log/pods").doesNotContain("/proc/sys/")
          .doesNotContain(node.runtime().dir().toString());
      try (var hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
        assertThat(hierarchies.map(h -> h.resolve(node.runtime().cgroupParent().substring(1)))).as("its cgroups gone")
            .noneMatch(Files::exists);
      }
    }
  }

  @Test
  void withoutShmguardTheSecondAttemptFindsTheFirstAttemptsFileAndNoRoom() throws Exception {
    String uid = node.create(KubeletNode.seed002Pod("unguarded-0", "Ung00", true, 3));
    try {
      List<String> log = node.attempts(uid, 2);
      assertThat(log.get(0)).isEqualTo("attempt 1 sees: [] write: ok");
      // ENOSPC: busybox's head, writing through stdio, reports it as an I/O error; the file has what fit.
      assertThat(log.get(1)).isEqualTo("attempt 2 sees: [nccl-Ung001] write: failed at " + 24 * MIB + " bytes");
    } finally {
      node.delete("unguarded-0");
    }
  }

  @Test
  void aCrashLoopingPodsLeakInItsMemoryEmptyDirIsReapedBeforeEachRestartAndThePodRunsAtLast() throws Exception {
    crashLoop("llama-0", "Kbl00", true);
  }

  @Test
  void aCrashLoopingPodsLeakInItsSandboxShmIsReapedBeforeEachRestartAndThePodRunsAtLast() throws Exception {
    crashLoop("engine-0", "Sbx00", false);
  }

  private static void crashLoop(String name, String prefix, boolean emptyDir) throws Exception {
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 2s\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 1s\n");
    try (Journald journald = Journald.start();
        Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), JournalAlertSink.choose(),
            ServiceNotifier.none())) {
      long created = System.nanoTime();
      String uid = node.create(KubeletNode.seed002Pod(name, prefix, emptyDir, 3));
      try {
        Eventually.until(() -> name + " Running: " + node.pod(name).path("status") + "\n" + node.logTail(),
            Duration.ofMinutes(3), () -> node.pod(name).path("status").path("phase").asText().equals("Running"));
        long runningMillis = (System.nanoTime() - created) / 1_000_000;
        if (emptyDir) {
          assertThat(Files.getFileStore(KubeletNode.emptyDir(uid, "dshm")).getTotalSpace())
              .as("the kubelet sized the tmpfs by the sizeLimit").isEqualTo(64 * MIB);
        }
        List<String> log = node.attempts(uid, 3);
        assertThat(log).containsExactly("attempt 1 sees: [] write: ok", "attempt 2 sees: [] write: ok",
            "attempt 3 sees: [] write: ok");
        JsonNode status = node.pod(name).path("status");
        JsonNode container = status.path("containerStatuses").get(0);
        assertThat(container.path("restartCount").asInt()).isEqualTo(2);
        assertThat(container.path("state").has("running")).as(container.toString()).isTrue();
        assertThat(container.path("lastState").path("terminated").path("exitCode").asInt()).isEqualTo(1);

        List<String> timing = new ArrayList<>();
        for (int attempt = 1; attempt <= 2; attempt++) {
          String file = "nccl-" + prefix + attempt;
          List<JsonNode> reaped = Journald.entries("SHM_SEGMENT", file);
          assertThat(reaped).as(file + " reaped, in the journal").hasSize(1);
          JsonNode e = reaped.get(0);
          assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
          assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo("pod:" + uid);
          assertThat(e.get("SHM_POD_NAMESPACE").asText()).isEqualTo("default");
          assertThat(e.get("SHM_POD_NAME").asText()).isEqualTo(name);
          assertThat(e.get("SHM_POD_UID").asText()).isEqualTo(uid);
          assertThat(e.get("MESSAGE").asText()).endsWith("[pod default/" + name + "]");
          assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(emptyDir
              ? "pod:" + uid + ":" + KubeletNode.emptyDir(uid, "dshm") : "pod:" + uid + ":/dev/shm");
          long reapMicros = Long.parseLong(e.get("__REALTIME_TIMESTAMP").asText());
          long exitMicros = micros(KubeletNode.count(uid).resolve("exited" + attempt));
          long nextMicros = micros(KubeletNode.count(uid).resolve("started" + (attempt + 1)));
          timing.add(String.format("attempt %d: reaped %d ms after it exited, the next attempt started %d ms after it exited",
              attempt, (reapMicros - exitMicros) / 1000, (nextMicros - exitMicros) / 1000));
          if (attempt == 2) {
            assertThat(reapMicros).as("reaped before the kubelet's back-off of 10 s ended").isLessThan(nextMicros);
          }
        }
        String live = "nccl-" + prefix + 3;
        for (int pass = 0; pass < 3; pass++) {
          PassReport r = daemon.passNow().get(60, TimeUnit.SECONDS);
          assertThat(r.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals(live));
          assertThat(r.judgement().segments()).filteredOn(a -> a.segment().displayName().equals(live)).singleElement()
              .satisfies(a -> assertThat(a.reason()).startsWith("held by pid "));
        }
        assertThat(Journald.entries("SHM_SEGMENT", live)).as("the running attempt's file is kept").isEmpty();
        System.out.printf("kubelet crash loop (%s): pod Running %d ms after its creation; %s%n",
            emptyDir ? "memory emptyDir" : "sandbox shm", runningMillis, timing);
      } finally {
        node.delete(name);
      }
    }
  }

  private static long micros(Path file) throws IOException {
    return Files.getLastModifiedTime(file).to(TimeUnit.MICROSECONDS);
  }
}
