package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.gpu.HostGpus;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The daemon as systemd runs it, when what it listens on is not free: a busy metrics port is an
 * operational fault (it starts, works, alerts once and serves the port once freed), while a live
 * shmguard on the advice socket stops it with 75, never 78 (which the unit would not restart).
 */
class ListenFaultsTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void aBusyMetricsPortIsAlertedOnceWhileTheDaemonReapsAndIsServedOnceFreed() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "busy-port-");
    Path log = dir.resolve("daemon.log");
    Path socket = dir.resolve("advice.sock");
    try (Journald journald = Journald.start();
        TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777");
        NotifySocket notify = NotifySocket.bind(dir.resolve("notify"));
        ServerSocket squatter = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int port = squatter.getLocalPort();
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\n"
          + "reap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "metrics:\n  listen: \"127.0.0.1:" + port + "\"\n");
      ProcessBuilder pb = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1",
          "-cp", System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile());
      pb.environment().put("NOTIFY_SOCKET", notify.path().toString());
      Process daemon = pb.start();
      try {
        String first = notify.receive(PATIENCE);
        assertThat(first).as("first notification").isNotNull().startsWith("READY=1");
        Files.write(shm.file("nccl-Busy01"), new byte[] {1});
        Eventually.until("the leak reaped", PATIENCE, () -> !Files.exists(shm.file("nccl-Busy01")));
        assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(30))).contains("pong");
        Eventually.until("a metrics_unavailable entry", PATIENCE,
            () -> !Journald.entries("SHMGUARD_EVENT", "metrics_unavailable").isEmpty());
        Thread.sleep(4000); // tries at 1 s and 3 s after start fail meanwhile

        List<JsonNode> down = Journald.entries("SHMGUARD_EVENT", "metrics_unavailable");
        assertThat(down).hasSize(1);
        assertThat(down.get(0).get("SHM_LISTEN").asText()).isEqualTo("127.0.0.1:" + port);
        assertThat(down.get(0).get("SHM_REASON").asText()).containsIgnoringCase("in use");
        assertThat(down.get(0).get("PRIORITY").asText()).isEqualTo("4");
        assertThat(daemon.isAlive()).isTrue();

        squatter.close();
        // The backoff has reached 8 s at most by now; the next try finds the port free.
        Eventually.until("/metrics served on the freed port", Duration.ofSeconds(90), () -> scrapes(port));
        Eventually.until("a metrics_listening entry", PATIENCE,
            () -> !Journald.entries("SHMGUARD_EVENT", "metrics_listening").isEmpty());
        assertThat(Journald.entries("SHMGUARD_EVENT", "metrics_listening")).hasSize(1);
        assertThat(Journald.entries("SHMGUARD_EVENT", "metrics_unavailable")).hasSize(1);
        assertThat(Journald.entries("SHMGUARD_EVENT", "segment_reaped")).hasSize(1);

        daemon.destroy(); // SIGTERM
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(daemon.exitValue()).isZero();
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ndaemon's output:\n" + Files.readString(log), e);
      } finally {
        daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    } finally {
      Files.deleteIfExists(log);
      Files.deleteIfExists(dir.resolve("advice.env"));
      Files.deleteIfExists(dir);
    }
  }

  @Test
  void aLiveShmguardOnTheAdviceSocketStopsTheStartWith75() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "taken-socket-");
    Path socket = dir.resolve("advice.sock");
    AdviceResponder responder = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());
    try (TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777");
        AdviceServer other = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(2), 4)).start()) {
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
          + "advice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "metrics:\n  listen: \"\"\n");

      CliRun run = CliRun.of("daemon", "-c", config.toString());

      assertThat(run.status()).isEqualTo(75);
      assertThat(run.err()).contains("another shmguard already answers on " + socket).doesNotContain("Exception");
      assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(30))).contains("pong");
    } finally {
      Files.deleteIfExists(dir.resolve("advice.env"));
      Files.deleteIfExists(dir);
    }
  }

  @Test
  void onlyAMalformedMetricsAddressIsABadConfiguration() {
    Path bad = TestConfig.write("metrics:\n  listen: \"::1:9477\"\n");

    CliRun run = CliRun.of("daemon", "-c", bad.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err()).contains(bad + ":2").contains("metrics.listen").contains("needs brackets, such as [::1]:9477")
        .doesNotContain("Exception");
  }

  private static boolean scrapes(int port) {
    try {
      HttpResponse<String> r = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
          HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200 && r.body().contains("kind=\"metrics_unavailable\"");
    } catch (java.io.IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
