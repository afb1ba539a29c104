package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.ShmMetrics;
import org.shmguard.model.Dev;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.FuseFixture;
import org.shmguard.testing.Journald;
import org.shmguard.testing.KubeletNode;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.UserNsAttacker;

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
 *
 * <p>On the same node (one start for the class), what {@code mounts: [auto]} does with a real
 * pod's memory emptyDir: found at the kubelet's path and named while the pod's container is in
 * back-off, and by {@code scan}/{@code clean} as the shipped unit runs them; added and removed in
 * the journal under the pod's name; one mount with the running container's processes; reaped in
 * at the rediscovery once its container ends; and uid 65534's mounts at its path and planted log
 * entries taken for nothing.
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
      boolean deleted = false;
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

        String mount = emptyDir ? "pod:" + uid + ":" + KubeletNode.emptyDir(uid, "dshm") : "pod:" + uid + ":/dev/shm";
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
          assertThat(e.get("SHM_RUNTIME").asText()).isEqualTo("kubernetes");
          assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(mount);
          assertThat(e.get("MESSAGE").asText()).startsWith("reaped " + mount + "/" + file + " ")
              .endsWith("[pod default/" + name + "]");
          if (emptyDir) {
            assertThat(e.get("SHM_POD_VOLUME").asText()).isEqualTo("dshm");
          } else {
            assertThat(e.has("SHM_POD_VOLUME")).as("a sandbox shm is no volume").isFalse();
          }
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
          if (emptyDir && pass == 0) {
            // found at its host path and through the running attempt's mount namespace: one mount, the pod's
            Dev dev = devOf(KubeletNode.emptyDir(uid, "dshm"));
            assertThat(r.judgement().snapshot().mounts()).filteredOn(m -> m.dev().equals(dev)).singleElement().satisfies(m -> {
              assertThat(m.displayName()).isEqualTo(mount);
              assertThat(m.workload().podName()).isEqualTo(name);
              assertThat(m.workload().volume()).isEqualTo("dshm");
              assertThat(m.pids()).as("the running attempt's processes").isNotEmpty()
                  .allSatisfy(pid -> assertThat(cgroupOf(pid)).contains("pod" + uid));
            });
          }
        }
        assertThat(Journald.entries("SHM_SEGMENT", live)).as("the running attempt's file is kept").isEmpty();
        if (emptyDir) {
          assertThat(Journald.entries("SHM_POD_NAME", name)).as("mount_added for the pod's volume").anyMatch(a ->
              a.get("SHMGUARD_EVENT").asText().equals("mount_added")
                  && a.get("MESSAGE").asText().startsWith("watching " + mount + " (volume"));
        }
        System.out.printf("kubelet crash loop (%s): pod Running %d ms after its creation; %s%n",
            emptyDir ? "memory emptyDir" : "sandbox shm", runningMillis, timing);
        node.delete(name);
        deleted = true;
        if (emptyDir) {
          // the kubelet unmounts the volume of a deleted pod: mount_removed, under the pod's name
          Eventually.until("mount_removed for " + name, Duration.ofSeconds(60), () -> Journald.entries("SHM_POD_NAME", name)
              .stream().anyMatch(a -> a.get("SHMGUARD_EVENT").asText().equals("mount_removed")
                  && a.get("MESSAGE").asText().contains(KubeletNode.emptyDir(uid, "dshm").toString())));
        }
      } finally {
        if (!deleted) {
          node.delete(name);
        }
      }
    }
  }

  /**
   * A pod whose container leaves a 4 KiB NCCL file in its memory emptyDir and exits 1 at every
   * attempt, found in the kubelet's back-off (after its first restart: 10 s in which nothing of the
   * pod but its pause process runs, and no mount namespace shows the volume; the pod is checked to
   * be in the same back-off afterwards): {@code scan} finds the
   * volume at its host path and names the pod, in JSON, text and the metrics' info series, and
   * {@code scan} and {@code clean} as the shipped unit runs them (its capability bounding set, its
   * umask) name it too and reap what the crashed attempts left.
   */
  @Test
  void aPodsMemoryEmptyDirIsFoundAndNamedWhileItsContainerIsInBackOffAndTheUnitsCleanReapsItsLeak() throws Exception {
    String name = "backoff-0";
    String uid = node.create(KubeletNode.attemptsPod(name, "head -c 4096 /dev/zero > /dev/shm/nccl-Bko00$n; exit 1", true));
    try {
      Path dshm = KubeletNode.emptyDir(uid, "dshm");
      int restarts = awaitBackOff(name, 1).path("restartCount").asInt();
      long t0 = System.nanoTime();
      List<String> left = new ArrayList<>();
      for (int n = 1; n <= restarts + 1; n++) {
        left.add("nccl-Bko00" + n);
      }
      assertThat(names(dshm)).as("what the crashed attempts left").containsExactlyInAnyOrderElementsOf(left);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n");

      JsonNode scan = CliRun.scanJson(config);
      JsonNode mount = CliRun.mountAt(scan, dshm);
      assertThat(mount.get("origin").asText()).isEqualTo("volume");
      assertThat(mount.get("container").asText()).isEqualTo("pod:" + uid);
      assertThat(mount.get("scope").asText()).isEqualTo("node");
      JsonNode w = mount.get("workload");
      assertThat(w.get("runtime").asText()).isEqualTo("kubernetes");
      assertThat(w.get("podNamespace").asText()).isEqualTo("default");
      assertThat(w.get("podName").asText()).isEqualTo(name);
      assertThat(w.get("podUid").asText()).isEqualTo(uid);
      assertThat(w.get("volume").asText()).isEqualTo("dshm");
      for (String file : left) {
        assertThat(CliRun.verdictOf(scan, file)).as(file).isNotBlank();
      }
      assertThat(CliRun.of("scan", "-c", config.toString()).out())
          .contains("pod:" + uid + ":" + dshm + ": pod default/" + name + " (uid " + uid + ", emptyDir dshm)");

      ShmMetrics metrics = ShmMetrics.create();
      metrics.passCompleted(Engine.create(TestConfig.load(config), HostPaths.system()).clean(true), Duration.ZERO);
      Labels info = workloadInfo(metrics, dshm.toString());
      assertThat(info.get("pod")).isEqualTo(uid);
      assertThat(info.get("pod_namespace")).isEqualTo("default");
      assertThat(info.get("pod_name")).isEqualTo(name);
      assertThat(info.get("volume")).isEqualTo("dshm");
      assertThat(info.get("runtime")).isEqualTo("kubernetes");

      Cmd.Result unitScan = asTheUnit("scan", "--json", "-c", config.toString());
      assertThat(unitScan.status()).as(unitScan.err()).isZero();
      assertThat(unitScan.out()).contains("\"podName\" : \"" + name + "\"");
      Cmd.Result clean = asTheUnit("clean", "--json", "-c", config.toString());
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(clean.out()).contains("\"mount\" : \"pod:" + uid + ":" + dshm + "\"");
      JsonNode after = node.pod(name).path("status").path("containerStatuses").get(0);
      assertThat(after.path("restartCount").asInt()).as("no attempt ran meanwhile: %s", after).isEqualTo(restarts);
      assertThat(after.path("state").path("waiting").path("reason").asText()).isEqualTo("CrashLoopBackOff");
      assertThat(names(dshm)).as("reaped by the unit's clean").isEmpty();
      System.out.printf("kubelet back-off: scan, metrics and the unit's scan and clean took %d ms of the back-off%n",
          (System.nanoTime() - t0) / 1_000_000);
    } finally {
      node.delete(name);
    }
  }

  /**
   * The engine's container writes vLLM's offload region to its pod's memory emptyDir and closes
   * it (held by nothing whose exit the daemon could watch), then ends; the kubelet restarts it
   * after its back-off. With the sweep and the heartbeat an hour away, the rediscovery (every
   * second) sees the volume lose its container's processes and runs the pass that reaps the
   * region, before the restart; while the container ran, a pass kept it.
   */
  @Test
  void whatAnEndedContainerLeftOnItsPodsVolumeIsReapedAtTheNextRediscoveryNotTheNextSweep() throws Exception {
    String name = "offload-0";
    String region = "vllm_offload_0d6f3c1e8a2b.mmap";
    // attempt 1 exits at once (restarted at once), attempt 2 is the engine (its exit starts the 10 s back-off), 3 runs on
    String script = "if [ $n -eq 1 ]; then exit 1; fi; if [ $n -eq 2 ]; then head -c 65536 /dev/zero > /dev/shm/" + region
        + "; : > /count/wrote; while [ ! -e /count/go ]; do sleep 1; done; : > /count/exited2; exit 1; fi; exec sleep 3600";
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1h\n  heartbeat: 1h\n  rediscover: 1s\n");
    RecordingSink sink = new RecordingSink();
    try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), sink, ServiceNotifier.none())) {
      String uid = node.create(KubeletNode.attemptsPod(name, script, true));
      try {
        Path dshm = KubeletNode.emptyDir(uid, "dshm");
        Path count = KubeletNode.count(uid);
        Eventually.until(() -> "attempt 2 wrote its region\n" + node.logTail(), Duration.ofMinutes(2),
            () -> Files.exists(count.resolve("wrote")));
        sink.await(a -> a.kind() == EventKind.MOUNT_ADDED && a.message().contains(dshm.toString()), Duration.ofSeconds(30));
        PassReport whileRunning = daemon.passNow().get(60, TimeUnit.SECONDS);
        assertThat(whileRunning.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals(region));
        assertThat(dshm.resolve(region)).as("kept while the container that wrote it runs").exists();

        Files.createFile(count.resolve("go"));
        Eventually.until("the region reaped after its container ended", Duration.ofSeconds(30),
            () -> !Files.exists(dshm.resolve(region)));
        boolean beforeRestart = !Files.exists(count.resolve("started3"));
        long seenMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
        RecordingSink.Received r = sink.awaitSegment(EventKind.SEGMENT_REAPED, region, Duration.ofSeconds(10));
        assertThat(r.alert().field("SHM_REASON")).contains("every writer of this volume has exited");
        assertThat(r.alert().field("SHM_POD_NAME")).isEqualTo(name);
        assertThat(beforeRestart).as("reaped before the kubelet's back-off ended").isTrue();
        System.out.printf("kubelet rediscovery: the region's reap seen %d ms after its container exited%n",
            (seenMicros - micros(count.resolve("exited2"))) / 1000);
      } finally {
        node.delete(name);
      }
    }
  }

  /**
   * uid 65534 against a real pod's volume: at the kubelet's own path of a running pod's memory
   * emptyDir (its real uid) it can mount nothing, the kubelet's directories being closed to
   * others (0750); where they are opened, a tmpfs it mounts there in its own user and mount
   * namespace ({@code unshare -Urm}) is no pod's volume, and its file is kept by a pass that may
   * reap (grace 0). A pod log entry it could plant (a log directory it may write, its link to the
   * kubelet's, its entry in root's directory) names no pod, and neither does a log directory
   * without the pod's entry; the kubelet's own names it. fusermount3, as uid 65534, is refused at
   * the volume's path as the kubelet leaves it.
   */
  @Test
  void whatAUserMountsAtARealPodsVolumePathOrPlantsAsItsLogEntryIsNoPodsAndTheirFileIsKept() throws Exception {
    String name = "target-0";
    String uid = node.create(KubeletNode.attemptsPod(name,
        "head -c 4096 /dev/zero > /dev/shm/nccl-Own001; exec 3</dev/shm/nccl-Own001; exec sleep 3600", true));
    Path logs = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "pod-logs-");
    try {
      Path dshm = KubeletNode.emptyDir(uid, "dshm");
      Eventually.until(() -> name + " Running: " + node.pod(name).path("status"), Duration.ofMinutes(2),
          () -> node.pod(name).path("status").path("phase").asText().equals("Running")
              && Files.exists(dshm.resolve("nccl-Own001")));
      Dev podDev = devOf(dshm);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");

      List<Path> closed = closedToOthers(dshm.getParent());
      assertThat(closed).as("directories on the way that the kubelet keeps from other users").isNotEmpty();
      StringBuilder seen = new StringBuilder();
      for (Path d : closed) {
        seen.append(d).append(' ').append(PosixFilePermissions.toString(Files.getPosixFilePermissions(d))).append("; ");
      }
      System.out.printf("kubelet directories closed to others: %svolume %s%n", seen,
          PosixFilePermissions.toString(Files.getPosixFilePermissions(dshm)));
      assertThatThrownBy(() -> UserNsAttacker.mountsTmpfsAt(dshm).close()).hasMessageContaining("did not start");

      Map<Path, Set<PosixFilePermission>> modes = new LinkedHashMap<>();
      for (Path d : closed) {
        Set<PosixFilePermission> m = Files.getPosixFilePermissions(d);
        modes.put(d, m);
        Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        open.addAll(m);
        open.add(PosixFilePermission.OTHERS_EXECUTE);
        Files.setPosixFilePermissions(d, open);
      }
      try (UserNsAttacker a = UserNsAttacker.mountsTmpfsAt(dshm)) {
        Path planted = Path.of("/proc", Integer.toString(a.pid()), "root").resolve(dshm.toString().substring(1))
            .resolve("nccl-Atk001");
        Dev theirs = devOf(planted.getParent());
        assertThat(theirs).as("their own tmpfs").isNotEqualTo(podDev);
        PassReport pass = Engine.create(TestConfig.load(config), HostPaths.system()).clean(false);
        assertThat(pass.judgement().snapshot().mounts()).filteredOn(m -> m.workload() != null
            && uid.equals(m.workload().podUid()) && "dshm".equals(m.workload().volume())).singleElement()
            .satisfies(m -> assertThat(m.dev()).as("the pod's volume is the kubelet's tmpfs").isEqualTo(podDev));
        assertThat(pass.judgement().snapshot().mounts()).noneMatch(m -> m.dev().equals(theirs) && m.workload() != null);
        assertThat(pass.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Atk001"));
        assertThat(Files.size(planted)).as("their file kept").isEqualTo(4100);
        assertThat(dshm.resolve("nccl-Own001")).as("the pod's held file kept").exists();
      } finally {
        for (Map.Entry<Path, Set<PosixFilePermission>> m : modes.entrySet()) {
          Files.setPosixFilePermissions(m.getKey(), m.getValue());
        }
      }

      String entry = "default_" + name + "_" + uid;
      Files.setPosixFilePermissions(logs, PosixFilePermissions.fromString("rwxr-xr-x"));
      assertUnnamed(uid, dshm, Files.createDirectories(logs.resolve("empty"))); // no entry for the pod: its uid alone
      Path shared = Files.createDirectories(logs.resolve("shared")); // a log directory every user may write
      Cmd.run("chmod", "1777", shared.toString());
      Cmd.run(cat(FuseFixture.NOBODY, "mkdir", shared.resolve(entry).toString()));
      assertUnnamed(uid, dshm, shared);
      Path link = shared.resolve("pods"); // their link to the kubelet's own, where the configuration points
      Cmd.run(cat(FuseFixture.NOBODY, "ln", "-s", "/var/log/pods", link.toString()));
      assertUnnamed(uid, dshm, link);
      Path rootsDir = Files.createDirectories(logs.resolve("roots")); // their entry in root's directory
      Cmd.run("chown", "65534:65534", Files.createDirectories(rootsDir.resolve(entry)).toString());
      assertUnnamed(uid, dshm, rootsDir);
      assertThat(CliRun.mountAt(CliRun.scanJson(podLogsConfig(Path.of("/var/log/pods"))), dshm).get("workload")
          .get("podName").asText()).as("the kubelet's own entry names it: the refusals above are the rules").isEqualTo(name);

      // last: it skips where fusermount3 is missing
      assertThatThrownBy(() -> FuseFixture.ofNobodyAt(dshm).close()).hasMessageContaining("did not mount");
    } finally {
      Cmd.run("rm", "-rf", logs.toString());
      node.delete(name);
    }
  }

  private static Path podLogsConfig(Path podLogs) {
    return TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
        + "runtimes:\n  podLogs: " + podLogs + "\n");
  }

  private static void assertUnnamed(String uid, Path dshm, Path podLogs) {
    JsonNode w = CliRun.mountAt(CliRun.scanJson(podLogsConfig(podLogs)), dshm).get("workload");
    assertThat(w.get("podUid").asText()).isEqualTo(uid);
    assertThat(w.has("podName")).as("named from %s", podLogs).isFalse();
    assertThat(w.has("podNamespace")).as("named from %s", podLogs).isFalse();
  }

  /** The directories from / down to {@code dir} that other users may not search. */
  private static List<Path> closedToOthers(Path dir) throws IOException {
    List<Path> closed = new ArrayList<>();
    Path p = dir.getRoot();
    for (Path part : dir) {
      p = p.resolve(part);
      if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
        closed.add(p);
      }
    }
    return closed;
  }

  /** The status of pod {@code name}'s one container once the kubelet holds it in back-off after {@code restarts} restarts. */
  private static JsonNode awaitBackOff(String name, int restarts) {
    JsonNode[] status = new JsonNode[1];
    Eventually.until(() -> name + " in back-off after " + restarts + " restarts: " + status[0] + "\n" + node.logTail(),
        Duration.ofMinutes(2), () -> {
          JsonNode c = node.pod(name).path("status").path("containerStatuses").path(0);
          status[0] = c;
          return c.path("restartCount").asInt() >= restarts
              && c.path("state").path("waiting").path("reason").asText().equals("CrashLoopBackOff");
        });
    return status[0];
  }

  private static List<String> names(Path dir) throws IOException {
    try (var listing = Files.list(dir)) {
      return listing.map(p -> p.getFileName().toString()).toList();
    }
  }

  /** shmguard as the shipped unit runs it: its capability bounding set and UMask=0077. */
  private static Cmd.Result asTheUnit(String... args) {
    List<String> cmd = new ArrayList<>(List.of("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--bounding-set",
        CliRun.UNIT_CAPS, "--inh-caps", "-all", Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main"));
    cmd.addAll(List.of(args));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  private static Labels workloadInfo(ShmMetrics metrics, String mount) {
    for (MetricSnapshot s : metrics.scrape()) {
      if (s instanceof InfoSnapshot info && s.getMetadata().getName().equals("shmguard_mount_workload")) {
        List<Labels> points = info.getDataPoints().stream().map(p -> p.getLabels()).filter(l -> mount.equals(l.get("mount")))
            .toList();
        assertThat(points).hasSize(1);
        return points.get(0);
      }
    }
    throw new AssertionError("no shmguard_mount_workload");
  }

  private static Dev devOf(Path path) throws IOException {
    StatxResult st = Linux.get().stat(path.toString());
    return Dev.of(st.devMajor(), st.devMinor());
  }

  private static String cgroupOf(int pid) {
    try {
      return Files.readString(Path.of("/proc", Integer.toString(pid), "cgroup"));
    } catch (IOException e) {
      return "(pid " + pid + " gone: " + e + ")";
    }
  }

  private static String[] cat(String[] a, String... b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  private static long micros(Path file) throws IOException {
    return Files.getLastModifiedTime(file).to(TimeUnit.MICROSECONDS);
  }
}
