package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

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
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * The readiness answer on the metrics port ({@code GET /readyz}, the Kubernetes readiness probe)
 * from a real {@code shmguard daemon} whose passes the test stops: the host root it is given has
 * a FIFO for {@code proc/1/mountinfo}, so every pass blocks in open(2) until the test opens the
 * FIFO for writing, as on a filesystem that stopped answering.
 */
class ReadinessTest {
  private static final Pattern SERVING = Pattern.compile("serving metrics on http://127\\.0\\.0\\.1:(\\d+)/metrics");
  private static final Duration PATIENCE = Duration.ofSeconds(90);
  private final StringBuilder log = new StringBuilder();

  @Test
  void readyzFailsBeforeTheFirstPassAndAgainOncePassesStopWhileLivenessStillAnswers() throws Exception {
    Sandbox.require();
    Path root = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "stopped-passes-");
    Path fifo = root.resolve("proc/1/mountinfo");
    Files.createDirectories(fifo.getParent());
    Cmd.run("mkfifo", fifo.toString());
    Files.write(root.resolve("proc/meminfo"), Files.readAllBytes(Path.of("/proc/meminfo")));
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 500ms\nadvice:\n  enabled: false\n"
        + "metrics:\n  listen: \"127.0.0.1:0\"\n");
    Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "daemon", "-c", config.toString(), "--host-root", root.toString())
        .redirectErrorStream(true).start();
    try {
      int port = servingPort(daemon).get(120, TimeUnit.SECONDS);

      HttpResponse<String> before = get(port, "/readyz");
      assertThat(before.statusCode()).as(before.body()).isEqualTo(503);
      assertThat(before.body()).startsWith("not ready: no pass completed yet");
      assertThat(get(port, "/").statusCode()).as("liveness allows the start").isEqualTo(200);

      // Let passes through (each open of the FIFO gets end of file) until one completes.
      Eventually.until("a pass completed and /readyz answers 200", PATIENCE, () -> {
        release(fifo);
        return get(port, "/readyz").statusCode() == 200;
      });
      assertThat(get(port, "/readyz").body()).startsWith("ready: last pass ");

      // No more writers: the next pass blocks, and readiness fails within 2 x interval + 10 s.
      Eventually.until("/readyz answers 503 once passes stopped", PATIENCE, () -> get(port, "/readyz").statusCode() == 503);
      assertThat(get(port, "/readyz").body()).startsWith("not ready: no pass completed for ").contains("(limit 12s)");
      HttpResponse<String> live = get(port, "/");
      assertThat(live.statusCode()).as("liveness (limit 62 s) has not failed yet: " + live.body()).isEqualTo(200);
      assertThat(get(port, "/-/healthy").statusCode()).as("/-/healthy says only that the port answers").isEqualTo(200);
    } finally {
      daemon.destroy();
      if (!daemon.waitFor(30, TimeUnit.SECONDS)) {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      Cmd.run("rm", "-rf", root.toString());
    }
  }

  /** Opens the FIFO for writing and closes it at once: a blocked reader gets end of file. */
  private static void release(Path fifo) {
    Cmd.exec("timeout", "1", "sh", "-c", ": > \"$0\"", fifo.toString());
  }

  private CompletableFuture<Integer> servingPort(Process daemon) {
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
    return port;
  }

  private HttpResponse<String> get(int port, String path) {
    try {
      return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException | InterruptedException e) {
      synchronized (log) {
        throw new AssertionError("GET " + path + " failed: " + e + "; the daemon's log:\n" + log, e);
      }
    }
  }
}
