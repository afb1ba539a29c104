package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.testing.Exposition.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * {@code shmguard daemon} as a real process: its metrics endpoint shows its passes, what it
 * reaped and the alerts it raised, promtool accepts what it serves, and it serves every metric
 * the shipped Grafana dashboard queries.
 */
class DaemonMetricsTest {
  private static final Pattern SERVING = Pattern.compile("serving metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");

  @Test
  void daemonServesPassesReapsAndAlertsOnItsMetricsPort() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777")) {
      Path socket = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "metrics-").resolve("advice.sock");
      shm.createSegment("data.bin", 700 * 1024);
      shm.createSegment("nccl-DmLk01", 4_100);
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\n"
          + "reap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
          + "daemon:\n  interval: 1s\n"
          + "capacity:\n  warn: 50\n  critical: 60\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + socket.resolveSibling("advice.env") + "\n"
          + "metrics:\n  listen: \"127.0.0.1:0\"\n");
      // A held segment, so that the per-verdict gauges have a series once the leak is reaped.
      Holder held = Holder.start("create-map:4096", shm.file("nccl-DmHeld1").toString());
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "-c", config.toString()).redirectErrorStream(true).start();
      try {
        StringBuilder log = new StringBuilder();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
          try (BufferedReader r = new BufferedReader(new InputStreamReader(daemon.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null; ) {
              synchronized (log) {
                log.append(line).append('\n');
              }
              Matcher m = SERVING.matcher(line);
              if (m.find()) {
                port.complete(Integer.parseInt(m.group(1)));
              }
            }
          } catch (java.io.IOException ignored) {
            // the daemon ended
          }
          port.completeExceptionally(new AssertionError("the daemon never served metrics:\n" + log));
        }, "daemon-log");
        reader.setDaemon(true);
        reader.start();

        int p = port.get(120, TimeUnit.SECONDS);
        org.shmguard.testing.Eventually.until("the advice socket", Duration.ofSeconds(60), () -> Files.exists(socket));
        String advice = askUntilAnswered(socket, shm.dev().toString());
        String body = "";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
          body = scrape(p);
          if (body.contains("result=\"reaped\"") && body.contains("kind=\"capacity_critical\"")
              && body.contains("shmguard_advice_answers_total{")) {
            break;
          }
          Thread.sleep(200);
        }

        assertThat(sample(body, "shmguard_passes_total")).isGreaterThanOrEqualTo(1);
        assertThat(sample(body, "shmguard_reaps_total", "result=\"reaped\"")).isEqualTo(1);
        assertThat(sample(body, "shmguard_alerts_total", "kind=\"capacity_critical\"", "mount=\"" + shm.path() + "\""))
            .isGreaterThanOrEqualTo(1);
        assertThat(sample(body, "shmguard_scan_duration_seconds_count")).isGreaterThanOrEqualTo(1);
        assertThat(advice).contains("SHMGUARD_ADVICE=");
        String action = advice.lines().filter(l -> l.startsWith("SHMGUARD_ADVICE=")).findFirst().orElseThrow().substring(16);
        assertThat(sample(body, "shmguard_advice_answers_total", "advice=\"" + action + "\"")).isEqualTo(1);
        Promtool.checkMetrics(body);
        // The shipped dashboard's queries name only what this live daemon serves.
        for (String name : GrafanaDashboardTest.metricNames()) {
          assertThat(body.lines().anyMatch(l -> l.startsWith(name + "{") || l.startsWith(name + " ")))
              .as("the dashboard's " + name + " is a series of the live daemon's /metrics").isTrue();
        }
      } finally {
        held.close();
        daemon.destroy();
        if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
          daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  /** Asks for advice for 4 ranks once the daemon has finished its first pass. */
  private static String askUntilAnswered(Path socket, String dev) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        return org.shmguard.advice.AdviceClient.ask(socket, "ADVISE v1 ranks=4 dev=" + dev, Duration.ofSeconds(30));
      } catch (org.shmguard.advice.ProtocolException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        if (!e.getMessage().contains("first pass")) {
          throw e;
        }
        Thread.sleep(100); // not ready yet
      }
    }
  }

  private static String scrape(int port) throws Exception {
    return HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString()).body();
  }
}
