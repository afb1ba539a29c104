package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HealthAnswer;
import org.shmguard.advice.HostActions;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.ship.NodeProblemDetectorConfigTest;
import org.shmguard.testing.PyClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The shipped node-problem-detector rules run as NPD runs them: each rule's path and args from
 * the one-condition files of packaging/node-problem-detector/ exec'd with the rule's timeout, against a
 * real advice socket answering CHECK from a judgement of real tmpfs mounts (or no socket, or one
 * that never answers). Checked: the exit status NPD maps to the condition, and the output NPD
 * keeps (trimmed, at most max_output_length bytes).
 */
class NodeProblemDetectorProbeTest {
  private static final Duration STALE_AFTER = Duration.ofMinutes(2);

  private record Outcome(int status, String output, Duration took) {}

  private final List<TmpfsMount> mounts = new ArrayList<>();
  private Path socket;
  private AdviceServer server;
  private final List<JsonNode> plugins = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    PyClient.require();
    socket = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "npd-").resolve("advice.sock");
    for (String f : new java.util.TreeSet<>(NodeProblemDetectorConfigTest.FILES.keySet())) {
      plugins.add(new ObjectMapper().readTree(NodeProblemDetectorConfigTest.DIR.resolve(f).toFile()));
    }
  }

  @AfterEach
  void tearDown() throws IOException {
    if (server != null) {
      server.close();
    }
    mounts.forEach(TmpfsMount::close);
  }

  private TmpfsMount mount() {
    TmpfsMount m = TmpfsMount.create("size=1m,mode=1777");
    mounts.add(m);
    return m;
  }

  /** A daemon that judged {@code watched} once, with reaping a dry run or not, and a clock. */
  private void daemon(boolean dryRun, Clock clock) throws IOException {
    StringBuilder list = new StringBuilder();
    for (TmpfsMount m : mounts) {
      list.append(list.length() == 0 ? "" : ", ").append(m.path());
    }
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [" + list + "]\nreap:\n  grace: 0s\n"
        + "  requireHostPidNamespace: false\n  dryRun: " + dryRun + "\n")), HostPaths.system()).judge();
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none())
        .answerChecks(new HealthAnswer(90, dryRun, STALE_AFTER, clock));
    server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();
  }

  /** Every rule of the shipped plugin files, run as NPD runs it, by condition. */
  private Map<String, Outcome> probe() {
    Map<String, Outcome> out = new LinkedHashMap<>();
    for (JsonNode plugin : plugins) {
      probe(plugin, out);
    }
    assertThat(out.keySet()).containsExactlyInAnyOrder("ShmFull", "ShmLeak", "ShmguardDown");
    return out;
  }

  private void probe(JsonNode plugin, Map<String, Outcome> out) {
    int max = plugin.at("/pluginConfig/max_output_length").asInt();
    for (JsonNode rule : plugin.path("rules")) {
      assertThat(rule.path("path").asText()).isEqualTo("/usr/bin/python3");
      List<String> args = new ArrayList<>();
      for (JsonNode a : rule.path("args")) {
        // The installed client's path, here the tree's; everything else exactly as shipped.
        args.add(a.asText().equals("/usr/share/shmguard/shmguard_client.py") ? PyClient.CLIENT.toString() : a.asText());
      }
      assertThat(args.subList(0, 3)).containsExactly("-I", "-S", PyClient.CLIENT.toString());
      Duration timeout = Duration.ofSeconds(Long.parseLong(rule.path("timeout").asText().replace("s", "")));
      PyClient run = PyClient.run(timeout, Map.of("SHMGUARD_ADVICE_SOCKET", socket.toString()),
          args.subList(3, args.size()).toArray(String[]::new));
      assertThat(run.killed()).as("finished within the rule's timeout " + timeout).isFalse();
      String output = run.out().strip();
      assertThat(output.getBytes(java.nio.charset.StandardCharsets.UTF_8).length).as(output).isLessThanOrEqualTo(max);
      assertThat(output).doesNotContain("\n").isNotEmpty();
      assertThat(run.err()).isEmpty();
      out.put(rule.path("condition").asText(), new Outcome(run.status(), output, run.took()));
    }
  }

  @Test
  void aHealthyHostSetsNoCondition() throws Exception {
    mount();
    daemon(false, Clock.systemUTC());

    Map<String, Outcome> o = probe();

    assertThat(o.get("ShmFull")).extracting(Outcome::status, Outcome::output).containsExactly(0, "ok: no shm tmpfs past its critical fill");
    assertThat(o.get("ShmLeak")).extracting(Outcome::status, Outcome::output).containsExactly(0, "ok: no leaked segment shmguard may not reap");
    assertThat(o.get("ShmguardDown").status()).isZero();
    assertThat(o.get("ShmguardDown").output()).matches("ok: shmguard answers; its last pass began \\d+s ago");
    List<Long> millis = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      probe().values().forEach(x -> millis.add(x.took().toMillis()));
    }
    millis.sort(null);
    System.out.println("node-problem-detector probe (python3 -I -S shmguard_client.py check): median "
        + millis.get(millis.size() / 2) + " ms of " + millis.size() + " runs, max " + millis.get(millis.size() - 1) + " ms");
  }

  @Test
  void aLeakShmguardMayNotReapSetsShmLeak() throws Exception {
    TmpfsMount m = mount();
    m.createSegment("nccl-NpdLk1", 4_100);
    daemon(true, Clock.systemUTC()); // reap.dryRun: the daemon may not reap it

    Map<String, Outcome> o = probe();

    assertThat(o.get("ShmLeak").status()).isEqualTo(1);
    assertThat(o.get("ShmLeak").output()).isEqualTo("1 leaked segment (8.0K) shmguard may not reap: reap.dryRun is true");
    assertThat(o.get("ShmFull").status()).isZero();
    assertThat(o.get("ShmguardDown").status()).isZero();
    assertThat(m.file("nccl-NpdLk1")).exists();
  }

  @Test
  void aMountPastCriticalSetsShmFull() throws Exception {
    TmpfsMount m = mount();
    m.createSegment("data.bin", 950 * 1024);
    daemon(false, Clock.systemUTC());

    Map<String, Outcome> o = probe();

    assertThat(o.get("ShmFull").status()).isEqualTo(1);
    assertThat(o.get("ShmFull").output()).matches(m.path() + " 9\\d% full \\(critical 90%\\)");
    assertThat(o.get("ShmLeak").status()).isZero();
    assertThat(o.get("ShmguardDown").status()).isZero();
  }

  @Test
  void manyFullMountsAreCutToTheOutputLimitVisibly() throws Exception {
    for (int i = 0; i < 6; i++) {
      mount().createSegment("data.bin", 950 * 1024);
    }
    daemon(false, Clock.systemUTC());

    Outcome full = probe().get("ShmFull");

    assertThat(full.status()).isEqualTo(1);
    assertThat(full.output()).hasSize(160).endsWith("...").startsWith(mounts.get(0).path() + " 9");
  }

  @Test
  void noDaemonSetsShmguardDownAndLeavesTheOthersUnknown() {
    Map<String, Outcome> o = probe();

    assertThat(o.get("ShmguardDown").status()).isEqualTo(1);
    assertThat(o.get("ShmguardDown").output()).isEqualTo("shmguard is not running: nothing answers on " + socket
        + " (No such file or directory)");
    assertThat(o.get("ShmFull").status()).isEqualTo(2);
    assertThat(o.get("ShmLeak").status()).isEqualTo(2);
  }

  @Test
  void aStaleLastPassSetsShmguardDownAndLeavesTheOthersUnknown() throws Exception {
    mount().createSegment("data.bin", 950 * 1024);
    // The daemon's clock an hour past its last pass: passes stopped, its view of the host is old.
    daemon(false, Clock.offset(Clock.systemUTC(), Duration.ofHours(1)));

    Map<String, Outcome> o = probe();

    assertThat(o.get("ShmguardDown").status()).isEqualTo(1);
    assertThat(o.get("ShmguardDown").output()).matches("shmguard is stuck: its last pass began 360\\ds ago \\(limit 120s\\)");
    assertThat(o.get("ShmFull").status()).as("a stale pass says nothing about the mount now").isEqualTo(2);
    assertThat(o.get("ShmFull").output()).startsWith("unknown: stale: its last pass began");
    assertThat(o.get("ShmLeak").status()).isEqualTo(2);
  }

  @Test
  void aDaemonThatNeverAnswersIsShmguardDownWithinTheRuleTimeout() throws Exception {
    try (ServerSocketChannel mute = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      mute.bind(UnixDomainSocketAddress.of(socket));

      Outcome down = probe().get("ShmguardDown");

      assertThat(down.status()).isEqualTo(1);
      assertThat(down.output()).isEqualTo("shmguard did not answer on " + socket + " within 5 s");
    } finally {
      Files.deleteIfExists(socket);
    }
  }
}
