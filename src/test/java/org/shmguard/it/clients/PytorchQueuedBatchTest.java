package org.shmguard.it.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A real PyTorch (Debian's python3-torch 1.13, the file_system strategy) whose producer puts 12
 * batches in a queue and exits normally while its consumer, a live client of the job's
 * torch_shm_manager, reads them only after the pytorch grace (10 s, its floor): every batch waits
 * as {@code waiting}, none is reaped, none is alerted as leaked. The same job killed whole (its
 * consumer and its manager SIGKILLed) has its batches reaped within the grace and a few seconds.
 * Both in the daemon's PID namespace and in a PID namespace of the job's own.
 */
class PytorchQueuedBatchTest {
  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static final Duration GRACE = Duration.ofSeconds(10);
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private Daemon daemon;
  @TempDir Path tmp;

  /** Where the job runs: its own mount namespace (its /dev/shm is the test's tmpfs), and the daemon's or its own PID namespace. */
  enum Layout { DAEMONS_PID_NAMESPACE, OWN_PID_NAMESPACE }

  /** The longest an event's pass waits for the pass budget (daemon.PassBudget.MAX_WAIT_NANOS). */
  private static final Duration BUDGETS_LONGEST_WAIT = Duration.ofSeconds(10);

  @AfterEach
  void stopDaemon() throws Exception {
    if (daemon != null) {
      daemon.close();
    }
  }

  private void startDaemonOn(TmpfsMount shm) throws Exception {
    startDaemonOn(shm, "daemon:\n  interval: 1s\n");
  }

  private void startDaemonOn(TmpfsMount shm, String daemonSection) throws Exception {
    startDaemonOn(shm.path(), daemonSection);
  }

  private void startDaemonOn(Path shm, String daemonSection) throws Exception {
    daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [" + shm + "]\n"
        + "reap:\n  requireHostPidNamespace: false\n" + daemonSection + "families:\n  pytorch:\n    grace: "
        + GRACE.toSeconds() + "s\n")), HostPaths.system(), sink, ServiceNotifier.none());
  }

  /** The job with {@code shm} bound at its /dev/shm and its manager's socket directory under the test's own temporary directory. */
  private Process job(TmpfsMount shm, Layout layout) throws Exception {
    Path script = Path.of(getClass().getResource("/pytorch/producer_exits.py").toURI());
    List<String> cmd = new ArrayList<>(layout == Layout.OWN_PID_NAMESPACE
        ? List.of("unshare", "--pid", "--fork", "--kill-child", "--mount-proc")
        : List.of("unshare", "--mount", "--propagation", "private"));
    cmd.addAll(List.of("sh", "-c", "mount --bind \"$1\" /dev/shm && shift && exec \"$@\"", "sh",
        shm.path().toString(), PYTHON.toString(), script.toString()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("TMPDIR", tmp.toString());
    return pb.start();
  }

  /** Reads the job's lines up to one starting with {@code until}, into {@code into}. */
  private static void readUntil(BufferedReader r, String until, List<String> into) throws IOException {
    for (String line; (line = r.readLine()) != null; ) {
      into.add(line);
      if (line.startsWith(until)) {
        return;
      }
    }
  }

  private static List<String> torchFiles(TmpfsMount shm) throws IOException {
    return torchFiles(shm.path());
  }

  private static List<String> torchFiles(Path shm) throws IOException {
    try (Stream<Path> files = Files.list(shm)) {
      return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("torch_")).sorted().toList();
    }
  }

  /** SIGKILLs the consumer and the manager together (the producer has exited). */
  private static void killWhole(Process job, Layout layout, List<String> lines) throws InterruptedException {
    if (layout == Layout.OWN_PID_NAMESPACE) {
      job.destroyForcibly(); // --kill-child: the namespace's init gets SIGKILL, and with it every process there
    } else {
      // The manager is the producer's child, left to the sandbox's init when the producer exited.
      int managerPid = lines.stream().filter(l -> l.startsWith("manager ")).map(l -> Integer.parseInt(l.substring(8)))
          .findFirst().orElseThrow();
      ProcessHandle manager = ProcessHandle.of(managerPid).orElseThrow();
      assertThat(manager.info().command().orElse("")).endsWith("torch_shm_manager");
      job.descendants().forEach(ProcessHandle::destroyForcibly);
      manager.destroyForcibly();
      job.destroyForcibly();
    }
    assertThat(job.waitFor(20, TimeUnit.SECONDS)).isTrue();
  }

  private static void endJob(Process job) throws InterruptedException {
    job.descendants().forEach(ProcessHandle::destroyForcibly);
    job.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
  }

  @ParameterizedTest
  @EnumSource(Layout.class)
  void batchesWhoseProducerExitedWaitPastTheGraceForTheirLiveConsumerAndAllArrive(Layout layout) throws Exception {
    Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    try (TmpfsMount shm = TmpfsMount.create("size=256m")) {
      startDaemonOn(shm);
      Process job = job(shm, layout);
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(job.getInputStream(), StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        readUntil(out, "producer exited", lines);
        assertThat(lines).as(String.join("\n", lines)).contains("batch 0 OK", "producer exited 0");
        assertThat(torchFiles(shm)).as("the 11 batches still in the queue").hasSize(11);

        Thread.sleep(GRACE.plusSeconds(3).toMillis()); // the batches wait unheld, their creator gone, past the grace
        PassReport pass = daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        List<Assessment> torch = pass.judgement().segments().stream()
            .filter(a -> a.segment().displayName().startsWith("torch_")).toList();

        try (OutputStream in = job.getOutputStream()) {
          in.write('\n'); // the consumer reads on
        }
        readUntil(out, "done", lines);
        assertThat(job.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(lines).as(String.join("\n", lines)).filteredOn(l -> l.startsWith("batch ")).hasSize(12)
            .allMatch(l -> l.endsWith(" OK"));
        assertThat(sink.of(EventKind.SEGMENT_REAPED)).as("no batch reaped").isEmpty();
        assertThat(sink.of(EventKind.SEGMENT_LEAKED)).as("no batch alerted as leaked").isEmpty();
        assertThat(org.shmguard.view.ScanText.scan(pass.judgement(), true)).as("scan's table").contains("waiting");
        assertThat(org.shmguard.view.Json.write(org.shmguard.view.ScanView.of(pass.judgement(), true)))
            .as("scan --json").containsPattern("\"verdict\"\\s*:\\s*\"waiting\"");
        assertThat(torch).as("the batches in the queue, past the grace").hasSize(11).allSatisfy(a -> {
          assertThat(a.verdict().label()).as(a.reason()).isEqualTo("waiting");
          assertThat(a.reason()).containsPattern("unheld and unchanged for 1[0-9]s \\(grace 10s\\), but its job may "
              + "still receive it: torch_shm_manager pid [0-9]+ \\(uid 0\\) has 1 client on \\S+/torch-shm-dir-\\w+/manager.sock");
        });
      } finally {
        endJob(job);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Layout.class)
  void aJobKilledWholeWithItsManagerHasItsBatchesReapedWithinTheGrace(Layout layout) throws Exception {
    Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    try (TmpfsMount shm = TmpfsMount.create("size=256m")) {
      startDaemonOn(shm);
      Process job = job(shm, layout);
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(job.getInputStream(), StandardCharsets.UTF_8));
        List<String> lines = new ArrayList<>();
        readUntil(out, "producer exited", lines);
        assertThat(lines).as(String.join("\n", lines)).contains("producer exited 0");
        List<String> left = torchFiles(shm);
        assertThat(left).hasSize(11);
        long killed = System.nanoTime();
        killWhole(job, layout, lines);
        for (String name : left) {
          Alert reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, name, GRACE.plusSeconds(10)).alert();
          assertThat(reaped.field("SHM_REASON")).contains("has exited");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - killed)).isLessThan(GRACE.plusSeconds(8));
        assertThat(torchFiles(shm)).isEmpty();
        assertThat(sink.of(EventKind.SEGMENT_LEAKED)).as(sink.describe()).isEmpty();
      } finally {
        endJob(job);
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Layout.class)
  void aWaitingJobKilledWholeHasItsBatchesReapedOnItsManagersExitNotAtTheNextSweep(Layout layout) throws Exception {
    Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    try (TmpfsMount shm = TmpfsMount.create("size=256m")) {
      // The sweep and the heartbeat an hour away: only the grace's end and events bring a pass.
      startDaemonOn(shm, "daemon:\n  interval: 1h\n  heartbeat: 1h\n");
      Process job = job(shm, layout);
      try {
        List<String> lines = new ArrayList<>();
        List<String> left = batchesWaitingPastTheGrace(job, shm.path(), lines);

        long killed = System.nanoTime();
        killWhole(job, layout, lines);
        for (String name : left) {
          Alert reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, name, Duration.ofSeconds(10)).alert();
          assertThat(reaped.field("SHM_REASON")).contains("has exited");
        }
        // The kill brings a pass at once, spaced only by the pass budget (PassBudget: at most 10 s once
        // passes ran back to back, as on a loaded machine), never the sweep an hour away.
        assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("from the kill to the last reap")
            .isLessThan(BUDGETS_LONGEST_WAIT.plusSeconds(3));
        assertThat(torchFiles(shm)).isEmpty();
        assertThat(sink.of(EventKind.SEGMENT_LEAKED)).as(sink.describe()).isEmpty();
      } finally {
        endJob(job);
      }
    }
  }

  /**
   * The job on the sandbox's own /dev/shm, in the daemon's mount and PID namespaces, its batches
   * waiting past the grace with the sweep an hour away: killed whole, they are reaped by the pass
   * the kill brings (within the pass budget's longest wait), not the sweep.
   */
  @org.junit.jupiter.api.Test
  void aWaitingJobOnTheHostsDevShmKilledWholeIsReapedOnItsManagersExit() throws Exception {
    Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    Assumptions.assumeTrue(System.getenv("SHMGUARD_SANDBOX") != null, "needs the test sandbox's own /dev/shm");
    Path shm = Path.of("/dev/shm");
    assertThat(torchFiles(shm)).isEmpty();
    startDaemonOn(shm, "daemon:\n  interval: 1h\n  heartbeat: 1h\n");
    Path script = Path.of(getClass().getResource("/pytorch/producer_exits.py").toURI());
    ProcessBuilder pb = new ProcessBuilder(PYTHON.toString(), script.toString()).redirectErrorStream(true);
    pb.environment().put("TMPDIR", tmp.toString());
    Process job = pb.start();
    try {
      List<String> lines = new ArrayList<>();
      List<String> left = batchesWaitingPastTheGrace(job, shm, lines);

      long killed = System.nanoTime();
      killWhole(job, Layout.DAEMONS_PID_NAMESPACE, lines);
      for (String name : left) {
        sink.awaitSegment(EventKind.SEGMENT_REAPED, name, Duration.ofSeconds(10));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("from the kill to the last reap")
          .isLessThan(BUDGETS_LONGEST_WAIT.plusSeconds(3));
      assertThat(torchFiles(shm)).isEmpty();
    } finally {
      endJob(job);
      for (String name : torchFiles(shm)) {
        Files.deleteIfExists(shm.resolve(name));
      }
    }
  }

  /**
   * Reads the job's output until its producer exited (into {@code lines}), checks that it left 11
   * batches, waits past their grace and checks that a pass finds every one of them waiting; the
   * batches' names.
   */
  private List<String> batchesWaitingPastTheGrace(Process job, Path shm, List<String> lines) throws Exception {
    BufferedReader out = new BufferedReader(new InputStreamReader(job.getInputStream(), StandardCharsets.UTF_8));
    readUntil(out, "producer exited", lines);
    assertThat(lines).as(String.join("\n", lines)).contains("producer exited 0");
    List<String> left = torchFiles(shm);
    assertThat(left).hasSize(11);
    Thread.sleep(GRACE.plusSeconds(3).toMillis());
    PassReport pass = daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    assertThat(pass.judgement().segments()).filteredOn(a -> a.segment().displayName().startsWith("torch_"))
        .hasSize(11).allSatisfy(a -> assertThat(a.verdict().label()).as(a.reason()).isEqualTo("waiting"));
    return left;
  }
}
