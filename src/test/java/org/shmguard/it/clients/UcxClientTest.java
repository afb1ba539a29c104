package org.shmguard.it.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.MountReport;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * UCX from Debian (ucx-utils): two ucx_perftest processes over the POSIX shared-memory transport,
 * their segments in the test's tmpfs (UCX_POSIX_DIR). With proc links on (UCX's default) the
 * files are unlinked at once and their memory is hidden usage, attributed to the two processes;
 * with UCX_POSIX_USE_PROC_LINK=n they stay named, are held while the processes live, and are left
 * behind when both are killed: reported, and reaped only when the configuration says so.
 */
class UcxClientTest {
  private static final Path PERFTEST = Path.of("/usr/bin/ucx_perftest");
  private TmpfsMount shm;
  private final List<Process> started = new ArrayList<>();

  @BeforeEach
  void tmpfs() {
    assumeThat(Files.isExecutable(PERFTEST)).as("needs UCX (ucx-utils)").isTrue();
    shm = TmpfsMount.create("size=64m,mode=1777");
  }

  @AfterEach
  void stop() throws Exception {
    for (Process p : started) {
      p.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
    }
    if (shm != null) {
      shm.close();
    }
  }

  /** A server and a client streaming tagged messages to each other until killed. */
  private List<Process> startPair(boolean procLinks) throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Map<String, String> env = Map.of("UCX_TLS", "posix,self,tcp", "UCX_POSIX_DIR", shm.path().toString(),
        "UCX_POSIX_USE_PROC_LINK", procLinks ? "y" : "n");
    Process server = start(env, PERFTEST.toString(), "-p", Integer.toString(port), "-t", "tag_bw", "-n", "2000000000");
    Thread.sleep(500);
    Process client = null;
    for (int attempt = 0; attempt < 20 && client == null; attempt++) {
      Process c = start(env, PERFTEST.toString(), "127.0.0.1", "-p", Integer.toString(port), "-t", "tag_bw", "-n", "2000000000");
      if (c.waitFor(300, TimeUnit.MILLISECONDS)) {
        started.remove(c); // the server was not listening yet
      } else {
        client = c;
      }
    }
    assertThat(client).as("a ucx_perftest client connected").isNotNull();
    return List.of(server, client);
  }

  private Process start(Map<String, String> env, String... cmd) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD);
    pb.environment().putAll(env);
    Process p = pb.start();
    started.add(p);
    return p;
  }

  private Engine engine(String families) {
    return Engine.create(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
        + families)), HostPaths.system());
  }

  private static List<Assessment> ucx(Judgement j) {
    return j.segments().stream().filter(a -> a.segment().displayName().startsWith("ucx_shm_posix_")).toList();
  }

  private static void killAll(List<Process> ps) throws InterruptedException {
    for (Process p : ps) {
      p.destroyForcibly();
    }
    for (Process p : ps) {
      assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void withProcLinksTheSegmentsAreHiddenUsageAttributedToTheirHolders() throws Exception {
    Engine engine = engine("");
    List<Process> pair = startPair(true);
    List<Integer> pids = pair.stream().map(p -> (int) p.pid()).toList();
    Eventually.until("UCX to map its segments", Duration.ofSeconds(30), () -> !engine.judge().mounts().get(0).hidden().isEmpty());
    Judgement j = engine.judge();
    assertThat(ucx(j)).as("unlinked at once: nothing named").isEmpty();
    MountReport report = j.mounts().get(0);
    assertThat(report.hiddenBytes()).isPositive();
    assertThat(report.hidden()).allSatisfy(h -> {
      assertThat(h.path()).contains("ucx_shm_posix_");
      assertThat(pids).containsAll(h.pids());
    });
    assertThat(report.hidden().stream().flatMap(h -> h.pids().stream()).distinct()).containsExactlyInAnyOrderElementsOf(pids);

    killAll(pair);
    Judgement after = engine.clean(false).judgement();
    assertThat(after.mounts().get(0).hidden()).isEmpty();
    assertThat(ucx(after)).isEmpty();
  }

  @Test
  void withoutProcLinksTheSegmentsAreHeldThenLeftBehindReportedAndReapedOnlyWhenConfigured() throws Exception {
    Engine byDefault = engine("");
    Engine reaping = engine("families:\n  ucx:\n    reap: true\n");
    List<Process> pair = startPair(false);
    List<Integer> pids = pair.stream().map(p -> (int) p.pid()).toList();
    Eventually.until("UCX to create its named segments", Duration.ofSeconds(30), () -> !ucx(byDefault.judge()).isEmpty());
    // Both processes keep creating segments while connecting: judge once the set is stable.
    Eventually.until("UCX's segments to settle", Duration.ofSeconds(30), () -> ucx(byDefault.judge()).stream()
        .allMatch(a -> a.verdict() == Verdict.HELD) && ucx(byDefault.judge()).size() == ucx(reaping.judge()).size());
    List<Assessment> held = ucx(byDefault.judge());
    assertThat(held).isNotEmpty().allSatisfy(a -> {
      assertThat(a.verdict()).isEqualTo(Verdict.HELD);
      assertThat(a.family()).isEqualTo("ucx");
      assertThat(a.holders()).allSatisfy(h -> assertThat(pids).contains(h.pid()));
    });

    killAll(pair);
    PassReport reported = byDefault.clean(false);
    assertThat(ucx(reported.judgement())).hasSameSizeAs(held).allSatisfy(a -> {
      assertThat(a.verdict()).isEqualTo(Verdict.LEAKED);
      assertThat(a.reason()).contains("every process that held it has exited").contains("families.ucx.reap is off");
    });
    assertThat(reported.outcomes()).isEmpty();

    PassReport reaped = reaping.clean(false);
    assertThat(reaped.outcomes()).isNotEmpty().allSatisfy(o ->
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
    try (Stream<Path> left = Files.list(shm.path())) {
      assertThat(left).isEmpty();
    }
  }
}
