package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.testing.Journald;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.ContainerdCri;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * containerd 1.6's CRI for real ({@link ContainerdCri}): a pod's /dev/shm belongs to its sandbox,
 * a 64 MiB tmpfs at {@code <state>/io.containerd.grpc.v1.cri/sandboxes/<id>/shm} that the pause
 * container and every container of the pod bind. shmguard finds it while the pod lives (through
 * the pause process, whatever else runs), judges a file two containers of the pod share, reaps
 * what a crashed container left before the next container of the same sandbox starts (the test
 * recreates it as a kubelet does on a restart) and never what a live container holds; a
 * {@code hostIPC} sandbox's containers write the node's /dev/shm, under the node's rules. One
 * containerd serves the class.
 */
class ContainerdSandboxShmTest {
  private static final long MIB = 1024 * 1024;
  private static ContainerdCri cri;

  @BeforeAll
  static void startContainerd() {
    Sandbox.require();
    assumeTrue(ContainerdCri.installed(), "needs containerd 1.6, runc, golang-go and busybox-static");
    cri = ContainerdCri.start();
  }

  @AfterAll
  static void stopContainerd() {
    if (cri != null) {
      cri.close();
    }
  }

  /**
   * One container makes and holds an NCCL file, a second container of the same pod opens it: the
   * sandbox shm is found at its host path as the pod's, and the file is kept while either holds it.
   * With both containers gone the pause process alone keeps the tmpfs, still found; the file is
   * then reaped. StopPodSandbox unmounts it.
   */
  @Test
  void theSandboxShmIsFoundAsThePodsAndAFileTwoOfItsContainersShareIsKeptUntilBothAreGone() throws Exception {
    String uid = "5b0c7a52-3e1f-4d2a-8c6b-9a0e1f2d3c4b";
    ContainerdCri.Pod pod = cri.runPod("training", "llama-0", uid, false);
    Path shm = cri.sandboxShm(pod);
    assertThat(hostMountinfo()).as("the CRI plugin's mount, in its own (the host's) mount namespace").contains(" " + shm + " ");
    // Each says so once it holds the file.
    String writer = cri.run(pod, "rank0", 0, "sh", "-c",
        "head -c 9000 /dev/zero > /dev/shm/nccl-Sbx001; exec 3</dev/shm/nccl-Sbx001; echo holding; exec sleep 600");
    Eventually.until("rank0 holding its file", Duration.ofSeconds(30), () -> cri.logs(pod, "rank0", 0).contains("holding"));
    assertThat(shm.resolve("nccl-Sbx001")).exists();
    String reader = cri.run(pod, "rank1", 0, "sh", "-c",
        "exec 3</dev/shm/nccl-Sbx001; echo \"rank1 sees: [$(ls /dev/shm)]\"; exec sleep 600");
    Eventually.until("rank1 running", Duration.ofSeconds(30), () -> cri.logs(pod, "rank1", 0).contains("rank1 sees: [nccl-Sbx001]"));
    int writerPid = cri.pid(writer);
    int readerPid = cri.pid(reader);

    JsonNode m = mountAt(CliRun.scanJson(config()), shm);
    assertThat(m.get("origin").asText()).isEqualTo("namespace");
    assertThat(m.get("container").asText()).isEqualTo("pod:" + uid);
    assertThat(m.get("workload").get("podNamespace").asText()).isEqualTo("training");
    assertThat(m.get("workload").get("podName").asText()).isEqualTo("llama-0");
    assertThat(m.get("workload").get("podUid").asText()).isEqualTo(uid);
    assertThat(m.get("sizeBytes").asLong()).isEqualTo(64 * MIB);
    assertThat(m.get("largest").get(0).get("name").asText()).isEqualTo("nccl-Sbx001");

    Engine engine = Engine.create(TestConfig.load(config()), HostPaths.system());
    Thread.sleep(1_100); // past the grace of 1s
    PassReport both = engine.clean(false);
    assertThat(both.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Sbx001"));
    assertThat(of(both, "nccl-Sbx001").reason()).startsWith("held by pid ").contains("pid " + writerPid + " (fd)")
        .contains("pid " + readerPid + " (fd)");

    ProcessHandle.of(writerPid).orElseThrow().destroyForcibly();
    Eventually.until("rank0 exited", Duration.ofSeconds(30), () -> !cri.running(writer));
    PassReport one = engine.clean(false);
    assertThat(one.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Sbx001"));
    assertThat(of(one, "nccl-Sbx001").reason()).isEqualTo("held by pid " + readerPid + " (fd)");

    ProcessHandle.of(readerPid).orElseThrow().destroyForcibly();
    Eventually.until("rank1 exited", Duration.ofSeconds(30), () -> !cri.running(reader));
    int pause = cri.pausePid(pod);
    JsonNode alone = mountAt(CliRun.scanJson(config()), shm);
    assertThat(alone.get("container").asText()).as("found through the pause process alone").isEqualTo("pod:" + uid);
    assertThat(alone.get("namespace").asText()).as("the pause process's mount namespace")
        .isEqualTo(Files.readSymbolicLink(Path.of("/proc", Integer.toString(pause), "ns", "mnt")).toString());
    PassReport none = engine.clean(false);
    assertThat(none.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals("nccl-Sbx001")).singleElement()
        .satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
    assertThat(Files.exists(shm.resolve("nccl-Sbx001"))).isFalse();

    cri.stopPod(pod);
    assertThat(hostMountinfo()).as("unmounted at StopPodSandbox").doesNotContain(" " + shm + " ");
    assertThat(paths(CliRun.scanJson(config()))).doesNotContain(shm.toString());
    cri.removePod(pod);
  }

  /**
   * A kubelet's restart loop on one sandbox: each attempt prints what it finds in /dev/shm, makes
   * an NCCL file, holds it until the daemon has seen it held, and exits 1; the test, as kubelet, creates the next attempt
   * in the same sandbox once the previous one has exited, after the daemon's reap (the daemon on a
   * grace of an hour, so only the evidence of holders seen and exited lets it reap). Every attempt
   * starts on an empty /dev/shm, each reap is in the journal naming the pod, and the last attempt,
   * which runs and holds its file, keeps it.
   */
  @Test
  void aCrashLoopingContainersLeakIsReapedBeforeItsNextAttemptAndALiveAttemptsFileIsKept() throws Exception {
    String uid = "7e3d9f10-2b4c-4e5f-a617-28394a5b6c7d";
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 1s\n" + runtimes());
    ContainerdCri.Pod pod = cri.runPod("inference", "engine-0", uid, false);
    Path shm = cri.sandboxShm(pod);
    List<Long> reapMillis = new ArrayList<>();
    try (Journald journald = Journald.start();
        Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), JournalAlertSink.choose(),
            ServiceNotifier.none())) {
      for (int attempt = 0; attempt < 2; attempt++) {
        String file = "nccl-Crl00" + attempt;
        // It holds its file until told (SIGTERM), then exits 1: a crash, its sleep (without the fd) ended with it. The
        // trap comes first: the shell is its PID namespace's init, which a signal without a handler does not reach.
        String id = cri.run(pod, "engine", attempt, "sh", "-c", "trap 'exit 1' TERM; echo \"attempt " + attempt + " sees: "
            + "[$(ls /dev/shm)]\"; head -c 9000 /dev/zero > /dev/shm/" + file + "; exec 3</dev/shm/" + file + "; sleep 600 3<&- & wait");
        int pid = cri.pid(id);
        Eventually.until("the daemon seeing attempt " + attempt + " hold its file", Duration.ofSeconds(60),
            () -> heldBy(daemon, file, pid));
        ProcessHandle.of(pid).orElseThrow().destroy();
        Eventually.until("attempt " + attempt + " exited", Duration.ofSeconds(60),
            () -> cri.inspect(id).path("status").path("state").asInt() == 2);
        long exited = System.nanoTime();
        assertThat(cri.inspect(id).path("status").path("exit_code").asInt()).isEqualTo(1);
        Eventually.until("the reap of " + file + " in the journal", Duration.ofSeconds(60),
            () -> !Journald.entries("SHM_SEGMENT", file).isEmpty());
        reapMillis.add((System.nanoTime() - exited) / 1_000_000);
        JsonNode e = Journald.entries("SHM_SEGMENT", file).get(0);
        assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
        assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo("pod:" + uid);
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo("pod:" + uid + ":/dev/shm");
        assertThat(e.get("SHM_POD_NAMESPACE").asText()).isEqualTo("inference");
        assertThat(e.get("SHM_POD_NAME").asText()).isEqualTo("engine-0");
        assertThat(e.get("SHM_POD_UID").asText()).isEqualTo(uid);
        assertThat(e.get("MESSAGE").asText()).endsWith("[pod inference/engine-0]");
        assertThat(e.get("MESSAGE").asText()).contains("every process that held it has exited");
        assertThat(e.get("SHM_HOLDER_PID").toString()).as("the evidence: the attempt's shell, seen holding it").contains("\"" + pid + "\"");
        assertThat(reapMillis.get(attempt)).as("reaped before kubelet's first back-off (10 s) would start the next attempt")
            .isLessThan(10_000);
        assertThat(Files.exists(shm.resolve(file))).isFalse();
      }
      String live = cri.run(pod, "engine", 2, "sh", "-c", "seen=$(ls /dev/shm); head -c 9000 /dev/zero > /dev/shm/nccl-Crl002; "
          + "exec 3</dev/shm/nccl-Crl002; echo \"attempt 2 sees: [$seen]\"; exec sleep 600"); // says it once it holds the file
      Eventually.until("attempt 2 running", Duration.ofSeconds(30), () -> cri.logs(pod, "engine", 2).size() == 1);
      for (int attempt = 0; attempt < 3; attempt++) {
        assertThat(cri.logs(pod, "engine", attempt)).containsExactly("attempt " + attempt + " sees: []");
      }
      int livePid = cri.pid(live);
      for (int pass = 0; pass < 3; pass++) {
        PassReport r = daemon.passNow().get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(r.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-Crl002"));
        assertThat(of(r, "nccl-Crl002").reason()).isEqualTo("held by pid " + livePid + " (fd)");
      }
      assertThat(Journald.entries("SHM_SEGMENT", "nccl-Crl002")).as("a live attempt's file is never reaped").isEmpty();
      assertThat(Files.exists(shm.resolve("nccl-Crl002"))).isTrue();
      assertThat(cri.running(live)).isTrue();
      System.out.println("containerd restart loop: each leak reaped " + reapMillis + " ms after its attempt exited");
    } finally {
      cri.removePod(pod);
    }
  }

  /**
   * A {@code hostIPC} sandbox: no sandbox shm is mounted, its containers (each in its own PID
   * namespace) write the node's /dev/shm, and the file is judged as the node's: kept while the
   * container holds it, reaped once the container is gone.
   */
  @Test
  void aHostIpcSandboxsContainersWriteTheNodesShmUnderTheNodesRules() throws Exception {
    String uid = "91a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8";
    Path file = Path.of("/dev/shm/nccl-HIpc01");
    ContainerdCri.Pod pod = cri.runPod("training", "hostipc-0", uid, true);
    try {
      assertThat(hostMountinfo()).doesNotContain(" " + cri.sandboxShm(pod) + " ");
      String id = cri.run(pod, "rank0", 0, "sh", "-c",
          "head -c 9000 /dev/zero > /dev/shm/nccl-HIpc01; exec 3</dev/shm/nccl-HIpc01; echo holding; exec sleep 600");
      Eventually.until("the container holding its file", Duration.ofSeconds(30), () -> cri.logs(pod, "rank0", 0).contains("holding"));
      assertThat(file).as("on the node's /dev/shm").exists();
      int pid = cri.pid(id);
      assertThat(Files.readString(Path.of("/proc", Integer.toString(pid), "status"))).as("its own PID namespace")
          .containsPattern("NSpid:\\s+" + pid + "\\s+1\n");
      assertThat(StreamSupport.stream(CliRun.scanJson(config()).get("mounts").spliterator(), false)
          .filter(m -> m.path("container").asText().equals("pod:" + uid))).as("no mount of its own").isEmpty();
      Engine engine = Engine.create(TestConfig.load(config()), HostPaths.system());
      Thread.sleep(1_100);
      PassReport held = engine.clean(false);
      assertThat(held.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals("nccl-HIpc01"));
      Assessment a = of(held, "nccl-HIpc01");
      assertThat(a.mount().displayName()).isEqualTo("/dev/shm");
      assertThat(a.reason()).isEqualTo("held by pid " + pid + " (fd)");

      ProcessHandle.of(pid).orElseThrow().destroyForcibly();
      Eventually.until("the container exited", Duration.ofSeconds(30), () -> !cri.running(id));
      PassReport gone = engine.clean(false);
      assertThat(gone.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals("nccl-HIpc01")).singleElement()
          .satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
      assertThat(Files.exists(file)).isFalse();
    } finally {
      cri.removePod(pod);
      Files.deleteIfExists(file);
    }
  }

  /**
   * No runtime's host paths looked for: the sandbox shm is found as a mount namespace's /dev/shm,
   * as on any node; its pod named from the pod log directory, kubelet's /var/log/pods.
   */
  private static String runtimes() {
    return "runtimes:\n  kubeletRoot: \"\"\n  podLogs: " + cri.podLogs() + "\n  dockerRoot: \"\"\n  containerStorage: []\n";
  }

  private static Path config() {
    return TestConfig.write("mounts: [auto]\nreap:\n  grace: 1s\n  requireHostPidNamespace: false\n" + runtimes());
  }

  /** Whether a pass of the daemon's judges {@code file} held by {@code pid} alone. */
  private static boolean heldBy(Daemon daemon, String file, int pid) {
    try {
      return daemon.passNow().get(60, java.util.concurrent.TimeUnit.SECONDS).judgement().segments().stream()
          .anyMatch(a -> a.segment().displayName().equals(file) && a.reason().equals("held by pid " + pid + " (fd)"));
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static Assessment of(PassReport pass, String name) {
    return pass.judgement().segments().stream().filter(a -> a.segment().displayName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError(name + " was not judged"));
  }

  private static JsonNode mountAt(JsonNode scan, Path path) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.path("path").asText().equals(path.toString())) {
        return m;
      }
    }
    throw new AssertionError(path + " is not among " + scan.get("mounts"));
  }

  private static List<String> paths(JsonNode scan) {
    return StreamSupport.stream(scan.get("mounts").spliterator(), false).map(m -> m.get("path").asText()).toList();
  }

  private static String hostMountinfo() throws Exception {
    return Files.readString(Path.of("/proc/self/mountinfo"));
  }
}
