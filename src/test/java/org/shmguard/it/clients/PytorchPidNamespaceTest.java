package org.shmguard.it.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A real PyTorch (Debian's python3-torch 1.13) sharing tensors through files (the file_system
 * strategy) from a PID namespace of its own, on a tmpfs it shares with the host through another
 * mount namespace (the layout of {@code docker run --ipc=host} without {@code --pid=host}), while
 * the daemon runs with a 10 s grace: every batch and every Pool result arrives intact, and the
 * batches waiting in the paused loader's queue past the grace are {@code waiting}, never alerted
 * as leaked.
 */
class PytorchPidNamespaceTest {
  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private Daemon daemon;

  @AfterEach
  void stopDaemon() throws Exception {
    if (daemon != null) {
      daemon.close();
    }
  }

  private void startDaemonOn(TmpfsMount shm) throws Exception {
    daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\n"
        + "reap:\n  requireHostPidNamespace: false\ndaemon:\n  interval: 1s\nfamilies:\n  pytorch:\n    grace: 10s\n")),
        HostPaths.system(), sink, ServiceNotifier.none());
  }

  /** {@code script} under /usr/bin/python3 as pid 1 of a new PID namespace whose /dev/shm is {@code shm}; its workers get pids from 30000. */
  private static Process python(TmpfsMount shm, String script, String... args) throws Exception {
    Path file = Path.of(PytorchPidNamespaceTest.class.getResource("/pytorch/" + script).toURI());
    List<String> cmd = new ArrayList<>(List.of("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
        "mount --bind \"$1\" /dev/shm && echo 29999 > /proc/sys/kernel/ns_last_pid && shift && exec \"$@\"", "sh",
        shm.path().toString(), PYTHON.toString(), file.toString()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  private static List<String> lines(Process p, String untilLine, List<String> into) throws Exception {
    BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = r.readLine()) != null) {
      into.add(line);
      if (line.equals(untilLine)) {
        break;
      }
    }
    return into;
  }

  @Test
  void prefetchedBatchesWaitingPastTheGraceWhileTheConsumerPausesAllArriveIntact() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    try (TmpfsMount shm = TmpfsMount.create("size=256m")) {
      startDaemonOn(shm);
      Process job = python(shm, "dataloader_pause.py", "25");
      try {
        List<String> out = lines(job, "first", new ArrayList<>());
        assertThat(out).as("the job started").contains("first");
        Thread.sleep(14_000); // the prefetched batches wait unheld, past the 10 s grace
        PassReport pass = daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        List<Assessment> torch = pass.judgement().segments().stream()
            .filter(a -> a.segment().displayName().startsWith("torch_")).toList();
        assertThat(torch).as("the batches waiting in the queue").isNotEmpty();
        // Past the grace, they wait in the live job: its workers' torch_shm_managers have the main process as a client.
        assertThat(torch).filteredOn(a -> a.holders().isEmpty()).isNotEmpty().allSatisfy(a -> {
          assertThat(a.verdict().label()).as(a.reason()).isIn("waiting", "grace");
          assertThat(a.verdict().reapable()).as(a.reason()).isFalse();
        });
        assertThat(torch).filteredOn(a -> a.verdict().label().equals("waiting")).isNotEmpty()
            .allSatisfy(a -> assertThat(a.reason()).containsPattern("but its job may still receive it: torch_shm_manager pid [0-9]+ "
                + "\\(uid 0\\) has [0-9]+ clients? on "));

        lines(job, "done", out);
        assertThat(job.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).as(String.join("\n", out)).filteredOn(l -> l.startsWith("batch ")).hasSize(12).allMatch(l -> l.endsWith(" OK"));
        assertThat(out).contains("done");
        assertThat(sink.of(EventKind.SEGMENT_REAPED)).as("nothing of the live job reaped").isEmpty();
        assertThat(sink.of(EventKind.SEGMENT_LEAKED)).as("no batch of the live job alerted as leaked").isEmpty();
      } finally {
        job.descendants().forEach(ProcessHandle::destroyForcibly);
        job.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aPoolHandingEveryResultOnByNameLosesNoneWhileTheDaemonSweeps() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(PYTHON.toFile().canExecute(), "Debian's python3-torch is not installed");
    try (TmpfsMount shm = TmpfsMount.create("size=256m")) {
      startDaemonOn(shm);
      Process job = python(shm, "pool_results.py");
      try {
        List<String> out = lines(job, "done", new ArrayList<>());
        assertThat(job.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(job.exitValue()).as(String.join("\n", out)).isZero();
        assertThat(out).filteredOn(l -> l.startsWith("result ")).hasSize(80).allMatch(l -> l.endsWith(" OK"));
        assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
      } finally {
        job.descendants().forEach(ProcessHandle::destroyForcibly);
        job.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    }
  }
}
