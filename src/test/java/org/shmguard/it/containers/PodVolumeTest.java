package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.ShmMetrics;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.KubeletLayout;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A pod's memory-backed emptyDir as kubelet leaves it between two starts of its container: a tmpfs
 * mounted at {@code <kubelet root>/pods/<uid>/volumes/kubernetes.io~empty-dir/dshm}, its log
 * directory {@code <pod logs>/training_llama-0_<uid>} beside it, and no process of the pod running
 * (none has the volume open or mapped, and no mount namespace shows it). {@code mounts: [auto]}
 * finds it, names the pod, and the daemon reaps a crashed rank's NCCL file in it.
 */
class PodVolumeTest {
  private static final String UID = "0d6f3c1e-8a2b-4c5d-9e7f-1234567890ab";
  /** The shipped unit's CapabilityBoundingSet (systemd/shmguard.service). */
  private static final String UNIT_CAPS = "-all,+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";

  private static Path config(KubeletLayout k, String more) {
    return TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n" + k.runtimesYaml() + more);
  }

  @Test
  void aPodsEmptyDirIsFoundAndNamedInScanAndMetricsWhileNothingOfThePodRuns() throws Exception {
    try (KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=4m");
      k.podLog("training", "llama-0", UID);
      dshm.createSegment("nccl-Pod001", 4096);
      Path config = config(k, "");

      JsonNode mount = volumeIn(CliRun.scanJson(config), dshm.path());
      assertThat(mount.get("origin").asText()).isEqualTo("volume");
      assertThat(mount.get("container").asText()).isEqualTo("pod:" + UID);
      assertThat(mount.get("scope").asText()).isEqualTo("node");
      JsonNode w = mount.get("workload");
      assertThat(w.get("runtime").asText()).isEqualTo("kubernetes");
      assertThat(w.get("podNamespace").asText()).isEqualTo("training");
      assertThat(w.get("podName").asText()).isEqualTo("llama-0");
      assertThat(w.get("podUid").asText()).isEqualTo(UID);
      assertThat(w.get("volume").asText()).isEqualTo("dshm");

      CliRun text = CliRun.of("scan", "-c", config.toString());
      assertThat(text.out()).contains("pod:" + UID + ":" + dshm.path() + ": pod training/llama-0 (uid " + UID + ", emptyDir dshm)");

      ShmMetrics metrics = ShmMetrics.create();
      metrics.passCompleted(Engine.create(TestConfig.load(config), HostPaths.system()).clean(true), Duration.ZERO);
      Labels info = workloadInfo(metrics, dshm.path().toString());
      assertThat(info.get("pod")).isEqualTo(UID);
      assertThat(info.get("pod_namespace")).isEqualTo("training");
      assertThat(info.get("pod_name")).isEqualTo("llama-0");
      assertThat(info.get("volume")).isEqualTo("dshm");
      assertThat(info.get("runtime")).isEqualTo("kubernetes");
    }
  }

  @Test
  void theDaemonReapsACrashedRanksNcclFileInThePodsVolumeAndTheJournalNamesThePod() throws Exception {
    try (Journald journald = Journald.start(); KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=4m");
      k.podLog("training", "llama-0", UID);
      Path leak = dshm.createSegment("nccl-Pod002", 9000);
      Thread.sleep(1_200); // older than the grace: what a crashed rank left
      try (Daemon daemon = Daemon.start(TestConfig.load(config(k, "daemon:\n  interval: 1s\n")), HostPaths.system(),
          JournalAlertSink.choose(), ServiceNotifier.none())) {
        Eventually.until("the reap in the journal", Duration.ofSeconds(60),
            () -> !Journald.entries("SHM_SEGMENT", "nccl-Pod002").isEmpty());
        JsonNode e = Journald.entries("SHM_SEGMENT", "nccl-Pod002").get(0);
        assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo("pod:" + UID + ":" + dshm.path());
        assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo("pod:" + UID);
        assertThat(e.get("SHM_RUNTIME").asText()).isEqualTo("kubernetes");
        assertThat(e.get("SHM_POD_NAMESPACE").asText()).isEqualTo("training");
        assertThat(e.get("SHM_POD_NAME").asText()).isEqualTo("llama-0");
        assertThat(e.get("SHM_POD_UID").asText()).isEqualTo(UID);
        assertThat(e.get("SHM_POD_VOLUME").asText()).isEqualTo("dshm");
        assertThat(e.get("MESSAGE").asText()).startsWith("reaped pod:" + UID + ":" + dshm.path() + "/nccl-Pod002")
            .endsWith("[pod training/llama-0]");
        assertThat(Files.exists(leak)).isFalse();
        JsonNode added = Journald.entries("SHM_POD_NAME", "llama-0").stream()
            .filter(a -> a.get("SHMGUARD_EVENT").asText().equals("mount_added")).findFirst().orElseThrow();
        assertThat(added.get("MESSAGE").asText()).startsWith("watching pod:" + UID + ":" + dshm.path() + " (volume");
      }
    }
  }

  @Test
  void underTheUnitsCapabilitiesAndUmaskScanNamesThePodAndCleanReapsItsLeak() throws Exception {
    try (KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=4m");
      k.podLog("training", "llama-0", UID);
      Path leak = dshm.createSegment("nccl-Pod003", 9000);
      Thread.sleep(1_200);
      Path config = config(k, "");
      Cmd.Result scan = asTheUnit("scan", "--json", "-c", config.toString());
      assertThat(scan.status()).as(scan.err()).isZero();
      assertThat(scan.out()).contains("\"podName\" : \"llama-0\"");
      Cmd.Result clean = asTheUnit("clean", "--json", "-c", config.toString());
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(clean.out()).contains("\"mount\" : \"pod:" + UID + ":" + dshm.path() + "\"");
      assertThat(leak).doesNotExist();
    }
  }

  /** shmguard as the shipped unit runs it: its capability bounding set and UMask=0077. */
  private static Cmd.Result asTheUnit(String... args) {
    java.util.List<String> cmd = new java.util.ArrayList<>(List.of("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv",
        "--bounding-set", UNIT_CAPS, "--inh-caps", "-all", Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main"));
    cmd.addAll(List.of(args));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  @Test
  void aPodsContainerRunningOnTheVolumeKeepsItOneMountWithTheSameNameAndItsProcesses() throws Exception {
    try (KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=1m");
      k.podLog("training", "llama-0", UID);
      // a container of the pod: a mount namespace of its own whose /dev/shm is the volume, as kubelet binds it
      Process c = new ProcessBuilder("unshare", "-m", "--propagation", "private", "sh", "-c",
          "mount --bind \"$1\" /dev/shm && echo ready && exec sleep 600", "sh", dshm.path().toString()).start();
      try {
        assertThat(new String(c.getInputStream().readNBytes(6))).isEqualTo("ready\n");
        var mounts = Engine.create(TestConfig.load(config(k, "")), HostPaths.system()).judge().snapshot().mounts();
        var ofVolume = mounts.stream().filter(m -> m.dev().equals(dshm.dev())).toList();
        assertThat(ofVolume).singleElement().satisfies(m -> {
          assertThat(m.displayName()).isEqualTo("pod:" + UID + ":" + dshm.path());
          assertThat(m.workload().podName()).isEqualTo("llama-0");
          assertThat(m.pids()).contains((int) c.pid());
        });
      } finally {
        c.destroyForcibly().waitFor();
      }
    }
  }

  @Test
  void aContainerThatEndsOnItsPodsVolumeHasWhatItLeftReapedAtTheNextRediscoveryNotTheNextSweep() throws Exception {
    try (KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=4m");
      k.podLog("training", "llama-0", UID);
      Path region = dshm.path().resolve("vllm_offload_0d6f3c1e8a2b.mmap");
      // the engine's container: its offload region written and closed (held by nothing the daemon
      // could watch for an exit), then the container lives on
      Process c = new ProcessBuilder("unshare", "-m", "--propagation", "private", "sh", "-c",
          "mount --bind \"$1\" /dev/shm && head -c 65536 /dev/zero > /dev/shm/" + region.getFileName()
              + " && echo ready && exec sleep 600", "sh", dshm.path().toString()).start();
      RecordingSink sink = new RecordingSink();
      try {
        assertThat(new String(c.getInputStream().readNBytes(6))).isEqualTo("ready\n");
        // the sweep an hour away, no heartbeat: only events and rediscovery bring a pass
        try (Daemon daemon = Daemon.start(TestConfig.load(config(k,
            "daemon:\n  interval: 1h\n  heartbeat: 1h\n  rediscover: 1s\n")), HostPaths.system(), sink,
            ServiceNotifier.none())) {
          sink.await(a -> a.kind() == EventKind.MOUNT_ADDED && a.message().contains(dshm.path().toString()),
              Duration.ofSeconds(30));
          Thread.sleep(3_000); // passes while the container lives: its region is kept
          assertThat(region).as("kept while the container that wrote it runs").exists();

          c.destroyForcibly().waitFor();
          Eventually.until("the region reaped after its container ended", Duration.ofSeconds(30),
              () -> !Files.exists(region));
          sink.await(a -> a.kind() == EventKind.SEGMENT_REAPED && a.message().contains(region.getFileName().toString()),
              Duration.ofSeconds(10)); // the outputs hear it once the pass is over
        }
      } finally {
        c.destroyForcibly().waitFor();
      }
    }
  }

  @Test
  void aVolumeMountedWhileTheDaemonRunsIsAddedAndItsUnmountRemovedInTheJournalUnderThePodsName() throws Exception {
    try (Journald journald = Journald.start(); KubeletLayout k = KubeletLayout.create()) {
      k.podLog("training", "llama-1", UID);
      try (Daemon daemon = Daemon.start(TestConfig.load(config(k, "daemon:\n  rediscover: 1s\n")), HostPaths.system(),
          JournalAlertSink.choose(), ServiceNotifier.none())) {
        TmpfsMount dshm = k.volume(UID, "dshm", "size=1m");
        Eventually.until("mount_added for the pod", Duration.ofSeconds(60), () -> Journald.entries("SHM_POD_NAME", "llama-1")
            .stream().anyMatch(e -> e.get("SHMGUARD_EVENT").asText().equals("mount_added")));
        dshm.close(); // the pod is deleted: kubelet unmounts its volume
        Eventually.until("mount_removed for the pod", Duration.ofSeconds(60), () -> Journald.entries("SHM_POD_NAME", "llama-1")
            .stream().anyMatch(e -> e.get("SHMGUARD_EVENT").asText().equals("mount_removed")));
      }
    }
  }

  @Test
  void aPodWithoutALogDirectoryIsNamedByItsUidAlone() throws Exception {
    try (KubeletLayout k = KubeletLayout.create()) {
      TmpfsMount dshm = k.volume(UID, "dshm", "size=1m");
      JsonNode w = volumeIn(CliRun.scanJson(config(k, "")), dshm.path()).get("workload");
      assertThat(w.get("podUid").asText()).isEqualTo(UID);
      assertThat(w.has("podName")).isFalse();
      assertThat(w.has("podNamespace")).isFalse();
    }
  }

  static JsonNode volumeIn(JsonNode scan, Path path) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.get("path").asText().equals(path.toString())) {
        return m;
      }
    }
    throw new AssertionError(path + " is not among the mounts: " + scan.get("mounts"));
  }

  private static Labels workloadInfo(ShmMetrics metrics, String mount) {
    for (MetricSnapshot s : metrics.scrape()) {
      if (s instanceof InfoSnapshot info && s.getMetadata().getName().equals("shmguard_mount_workload")) {
        List<Labels> points = info.getDataPoints().stream().map(p -> p.getLabels()).filter(l -> mount.equals(l.get("mount"))).toList();
        assertThat(points).hasSize(1);
        return points.get(0);
      }
    }
    throw new AssertionError("no shmguard_mount_workload");
  }
}
