package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.PyClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * An ordinary user's own tmpfs never makes the node unhealthy, and the host's own still does:
 * uid 65534 (setpriv) in an `unshare -Urm` namespace mounts a 1 MiB tmpfs at its /dev/shm and
 * fills it, with an unheld nccl file in it. A real daemon (a child process, reap.dryRun so that a
 * leak is a problem) with a real journald; asked as each health consumer asks: {@code shmguard
 * check} (the daemon's answer, and a pass of its own), the socket's CHECK, the shipped
 * node-problem-detector rules run as NPD runs them, the journal's capacity event, and the metrics
 * it serves fed to the shipped alert rules with {@code promtool test rules}.
 */
class OwnersTmpfsHealthTest {
  private static final Pattern SERVING = Pattern.compile("serving metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");
  private static final Path PLUGINS = Path.of("packaging/node-problem-detector");
  private static final Path RULES = Path.of("packaging/prometheus/shmguard-alerts.yaml").toAbsolutePath();
  private static final Path SOCKET = Path.of("/run/shmguard/advice.sock"); // the default: `shmguard check` asks it
  private static final Duration PATIENCE = Duration.ofSeconds(90);
  private static final List<String> RULE_METRICS = List.of("shmguard_mount_used_ratio", "shmguard_mount_hidden_bytes",
      "shmguard_mount_size_bytes", "shmguard_segments", "shmguard_build_info"); // build_info: the down rules see a live host

  @Test
  void aUsersOwnFullTmpfsLeavesEveryHealthAnswerHealthyAndIsNamedAsTheirs() throws Exception {
    try (Journald journald = Journald.start(); UserNsAttacker user = UserNsAttacker.ownFullShm()) {
      String dev = user.shm().dev().toString();
      String path = "/proc/" + user.pid() + "/root/dev/shm";
      try (RunningDaemon d = RunningDaemon.start()) {
        String metrics = d.metricsOnceTheyShow("dev=\"" + dev + "\"");

        CliRun check = CliRun.of("check");
        CliRun local = CliRun.of("check", "--local", "-c", d.config.toString());
        String answer = AdviceClient.ask(SOCKET, "CHECK v1", Duration.ofSeconds(30));
        Map<String, PyClient> npd = npdProbes();
        JsonNode scan = CliRun.scanJson(d.config);
        CliRun scanText = CliRun.of("scan", "--local", "-c", d.config.toString());

        for (CliRun c : List.of(check, local)) {
          assertThat(c.status()).as(c.out() + c.err()).isZero();
          assertThat(c.out()).startsWith("ok: ").contains("not the node's: uid 65534's " + path + " 100% full");
        }
        assertThat(answer).contains("SHMGUARD_HEALTH=ok\n").doesNotContain("SHMGUARD_FULL=").doesNotContain("SHMGUARD_LEAK=")
            .contains("SHMGUARD_OWNER_FULL=uid 65534's " + path + " 100% full (critical 95%)\n")
            // a mount shmguard only reports is measured, never listed (the host-wide memory bound): no leak is judged there
            .doesNotContain("SHMGUARD_OWNER_LEAK=");
        for (String condition : List.of("ShmFull", "ShmLeak", "ShmguardDown")) {
          assertThat(npd.get(condition).status()).as(condition + ": " + npd.get(condition).out()).isZero();
        }
        assertThat(npd.get("ShmFull").out()).contains("uid 65534's " + path);

        JsonNode critical = d.journalEntry("capacity_critical", "SHM_OWNER_UID", "65534");
        assertThat(critical.get("PRIORITY").asText()).isEqualTo("5");
        assertThat(critical.get("SHM_SCOPE").asText()).isEqualTo("owner");
        assertThat(critical.get("MESSAGE").asText()).contains("uid 65534's, not the node's");
        assertThat(Journald.entries("SHM_OWNER_UID", "65534")).allSatisfy(e ->
            assertThat(e.get("PRIORITY").asInt()).as(e.get("MESSAGE").asText()).isGreaterThanOrEqualTo(5));

        assertThat(series(metrics, "shmguard_mount_used_ratio", dev)).contains("scope=\"owner\"").contains("owner_uid=\"65534\"");
        promtoolTest(metrics, """
            - expr: count(ALERTS{alertstate="firing"}) or vector(0)
              eval_time: 20m
              exp_samples:
                - labels: '{}'
                  value: 0
            """);

        JsonNode mount = mountOf(scan, dev);
        assertThat(mount.get("scope").asText()).isEqualTo("owner");
        assertThat(mount.get("ownerUid").asLong()).isEqualTo(65534);
        assertThat(mount.get("reportOnly").asText()).contains("of uid 65534");
        assertThat(scanText.out()).contains("namespace (uid 65534's, report only)")
            .contains("report only: " + path + " is uid 65534's, not the node's: ");
        assertThat(user.file("nccl-Own001")).exists();
      }
    }
  }

  @Test
  void theHostsOwnTmpfsFilledTheSameWayStillMakesEveryHealthAnswerAProblem() throws Exception {
    try (Journald journald = Journald.start(); UserNsAttacker user = UserNsAttacker.ownFullShm();
        TmpfsMount host = TmpfsMount.createAt(Path.of("/dev/shm"), "size=1m,mode=1777")) {
      host.createSegment("nccl-Host01", 4100);
      Cmd.exec("sh", "-c", "head -c 2097152 /dev/zero > /dev/shm/filler");
      String dev = host.dev().toString();
      try (RunningDaemon d = RunningDaemon.start()) {
        String metrics = d.metricsOnceTheyShow("dev=\"" + user.shm().dev() + "\"");

        CliRun check = CliRun.of("check");
        CliRun local = CliRun.of("check", "--local", "-c", d.config.toString());
        String answer = AdviceClient.ask(SOCKET, "CHECK v1", Duration.ofSeconds(30));
        Map<String, PyClient> npd = npdProbes();

        for (CliRun c : List.of(check, local)) {
          assertThat(c.status()).as(c.out() + c.err()).isEqualTo(1);
          assertThat(c.out()).startsWith("/dev/shm 100% full (critical 95%); 1 leaked segment (8.0K) shmguard may not reap");
        }
        assertThat(answer).contains("SHMGUARD_HEALTH=problem\n").contains("SHMGUARD_FULL=/dev/shm 100% full (critical 95%)\n")
            .contains("SHMGUARD_LEAK=1 leaked segment (8.0K) shmguard may not reap: reap.dryRun is true\n");
        assertThat(npd.get("ShmFull").status()).as(npd.get("ShmFull").out()).isEqualTo(1);
        assertThat(npd.get("ShmFull").out()).startsWith("/dev/shm 100% full");
        assertThat(npd.get("ShmLeak").status()).as(npd.get("ShmLeak").out()).isEqualTo(1);
        assertThat(npd.get("ShmguardDown").status()).isZero();

        JsonNode critical = d.journalEntry("capacity_critical", "SHM_MOUNT", "/dev/shm");
        assertThat(critical.get("PRIORITY").asText()).isEqualTo("2");
        assertThat(critical.has("SHM_OWNER_UID")).isFalse();
        assertThat(critical.has("SHM_SCOPE")).isFalse();

        assertThat(series(metrics, "shmguard_mount_used_ratio", dev)).contains("scope=\"node\"").contains("owner_uid=\"\"");
        promtoolTest(metrics, """
            - expr: count by (alertname) (ALERTS{alertstate="firing"})
              eval_time: 20m
              exp_samples:
                - labels: '{alertname="ShmLeakNotReaped"}'
                  value: 1
                - labels: '{alertname="ShmMountNearlyFull"}'
                  value: 1
            - expr: count(ALERTS{alertstate="firing", owner_uid!=""}) or vector(0)
              eval_time: 20m
              exp_samples:
                - labels: '{}'
                  value: 0
            """);
        assertThat(host.file("nccl-Host01")).exists();
      }
    }
  }

  /** Every rule of the shipped node-problem-detector plugins (one file per condition), run as NPD runs it, by condition. */
  private static Map<String, PyClient> npdProbes() throws IOException {
    Map<String, PyClient> out = new LinkedHashMap<>();
    List<JsonNode> rules = new ArrayList<>();
    try (var files = java.nio.file.Files.list(PLUGINS)) {
      for (Path f : files.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
        new ObjectMapper().readTree(f.toFile()).path("rules").forEach(rules::add);
      }
    }
    assertThat(rules).as("the shipped NPD rules").isNotEmpty();
    for (JsonNode rule : rules) {
      List<String> args = new ArrayList<>();
      rule.path("args").forEach(a -> args.add(a.asText()));
      assertThat(args.subList(0, 3)).containsExactly("-I", "-S", "/usr/share/shmguard/shmguard_client.py");
      PyClient run = PyClient.run(Duration.ofSeconds(10), Map.of("SHMGUARD_ADVICE_SOCKET", SOCKET.toString()),
          args.subList(3, args.size()).toArray(String[]::new));
      assertThat(run.err()).isEmpty();
      out.put(rule.path("condition").asText(), run);
    }
    return out;
  }

  /** The exposition line of {@code metric} for the mount with device {@code dev}. */
  private static String series(String metrics, String metric, String dev) {
    return metrics.lines().filter(l -> l.startsWith(metric + "{") && l.contains("dev=\"" + dev + "\"")).findFirst()
        .orElseThrow(() -> new AssertionError("no " + metric + " for " + dev + " in\n" + metrics));
  }

  private static JsonNode mountOf(JsonNode scan, String dev) {
    for (JsonNode m : scan.get("mounts")) {
      if (m.get("dev").asText().equals(dev)) {
        return m;
      }
    }
    throw new AssertionError("no mount " + dev + " in " + scan.get("mounts"));
  }

  /**
   * The shipped rules evaluated by promtool over the daemon's real series of the metrics they use,
   * held at their scraped values for 30 minutes, against {@code expectations} (promql_expr_test).
   */
  private static void promtoolTest(String metrics, String expectations) throws IOException {
    StringBuilder input = new StringBuilder();
    for (String line : metrics.lines().toList()) {
      int brace = line.indexOf('{');
      int close = line.lastIndexOf('}');
      if (brace < 0 || close < brace || !RULE_METRICS.contains(line.substring(0, brace))) {
        continue;
      }
      String value = new BigDecimal(Double.toString(Double.parseDouble(line.substring(close + 1).trim()))).toPlainString();
      String labels = line.substring(brace + 1, close) + ",instance=\"node-1\",job=\"shmguard\"";
      input.append("      - series: '").append(line, 0, brace).append('{').append(labels).append("}'\n")
          .append("        values: '").append(value).append("x30'\n");
    }
    Path tests = Files.createTempFile(Files.createDirectories(Sandbox.MOUNTS), "rules-test-", ".yaml");
    try {
      Files.writeString(tests, "rule_files:\n  - " + RULES + "\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
          + "    input_series:\n" + input + "    promql_expr_test:\n" + expectations.indent(6));
      Promtool.testRules(tests);
    } finally {
      Files.deleteIfExists(tests);
    }
  }

  /** {@code shmguard daemon} as a child process, in a dry run, with its socket at the default path and metrics on. */
  private static final class RunningDaemon implements AutoCloseable {
    final Path config;
    private final Process process;
    private final Path log;
    private final int port;

    private RunningDaemon(Path config, Process process, Path log, int port) {
      this.config = config;
      this.process = process;
      this.log = log;
      this.port = port;
    }

    static RunningDaemon start() throws Exception {
      Sandbox.require();
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "owners-");
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  dryRun: true\n  requireHostPidNamespace: false\n"
          + "daemon:\n  interval: 1s\n"
          + "advice:\n  socket: " + SOCKET + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "metrics:\n  listen: \"127.0.0.1:0\"\n");
      Path log = dir.resolve("daemon.log");
      Process p = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      int[] port = {-1};
      try {
        Eventually.until(() -> "the daemon serving metrics and answering CHECK:\n" + read(log), PATIENCE, () -> {
          Matcher m = SERVING.matcher(read(log));
          if (m.find()) {
            port[0] = Integer.parseInt(m.group(1));
          }
          return port[0] > 0 && checkAnswered();
        });
      } catch (AssertionError | RuntimeException e) {
        stop(p);
        throw e;
      }
      return new RunningDaemon(config, p, log, port[0]);
    }

    private static boolean checkAnswered() {
      try {
        return AdviceClient.ask(SOCKET, "CHECK v1", Duration.ofSeconds(10)).contains("SHMGUARD_PASS_AGE_SECONDS=");
      } catch (Exception e) {
        return false;
      }
    }

    /** The metrics, once a scrape holds {@code text}. */
    String metricsOnceTheyShow(String text) {
      String[] body = {""};
      Eventually.until(() -> text + " in the metrics:\n" + body[0] + "\n" + read(log), PATIENCE, () -> {
        try {
          body[0] = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
              .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
          return false;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
        return body[0].contains(text);
      });
      return body[0];
    }

    /** The first journal entry of event {@code event} whose {@code field} is {@code value}, once there is one. */
    JsonNode journalEntry(String event, String field, String value) {
      List<JsonNode> found = new ArrayList<>();
      Eventually.until(() -> event + " with " + field + "=" + value + " in the journal: " + Journald.entries("SHMGUARD_EVENT", event),
          PATIENCE, () -> {
            found.clear();
            Journald.entries("SHMGUARD_EVENT", event).stream().filter(e -> e.path(field).asText().equals(value))
                .forEach(found::add);
            return !found.isEmpty();
          });
      return found.get(0);
    }

    private static String read(Path log) {
      try {
        return Files.exists(log) ? Files.readString(log) : "";
      } catch (IOException e) {
        return "(cannot read " + log + ": " + e.getMessage() + ")";
      }
    }

    private static void stop(Process p) throws InterruptedException {
      p.destroy();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }

    @Override
    public void close() throws InterruptedException {
      stop(process);
    }
  }
}
