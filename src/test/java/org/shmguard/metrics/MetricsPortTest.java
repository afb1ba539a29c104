package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.shmguard.testing.Exposition.sample;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.config.Config;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Outputs;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;

/**
 * A metrics port that cannot listen, on real loopback sockets: an operational fault that is
 * alerted once and retried with backoff until it listens, never an error that stops the caller.
 */
class MetricsPortTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private static final MetricsPort.Backoff QUICK = new MetricsPort.Backoff(Duration.ofMillis(50), Duration.ofMillis(200));
  private final RecordingSink sink = new RecordingSink();

  /** The daemon's outputs as Service makes them: the alerts' sink (here a recorder), the metrics added by start. */
  private Outputs outputs() {
    return new Outputs(sink.describe()).add(new AlertOutput(sink));
  }

  private static Config listening(String listen) {
    return TestConfig.parse("metrics:\n  listen: \"" + listen + "\"\n");
  }

  @Test
  void aBusyPortIsAlertedOnceAndServedSoonAfterItIsFreed() throws Exception {
    ServerSocket squatter = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    int port = squatter.getLocalPort();
    try (MetricsOutputs metrics = MetricsOutputs.start(listening("127.0.0.1:" + port), outputs(), QUICK)) {
      assertThat(metrics.port()).isEqualTo(-1);
      Alert down = sink.await(a -> a.kind() == EventKind.METRICS_UNAVAILABLE, PATIENCE).alert();
      assertThat(down.field("SHM_LISTEN")).isEqualTo("127.0.0.1:" + port);
      assertThat(down.field("SHM_REASON")).containsIgnoringCase("in use");
      Thread.sleep(1000); // several tries at most 200 ms apart fail meanwhile
      assertThat(sink.of(EventKind.METRICS_UNAVAILABLE)).hasSize(1);

      squatter.close();

      Eventually.until("the freed port served", PATIENCE, () -> metrics.port() == port);
      HttpResponse<String> r = get(port, "/metrics");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(sample(r.body(), "shmguard_alerts_total", "kind=\"metrics_unavailable\"")).isEqualTo(1);
      Alert up = sink.await(a -> a.kind() == EventKind.METRICS_LISTENING, PATIENCE).alert();
      assertThat(up.field("SHM_PORT")).isEqualTo(Integer.toString(port));
      assertThat(sink.all()).extracting(Alert::kind)
          .containsExactly(EventKind.METRICS_UNAVAILABLE, EventKind.METRICS_LISTENING);
    } finally {
      squatter.close();
    }
  }

  @Test
  void anAddressNotOnThisHostIsRetriedUntilClosedAndThenLeftAlone() throws Exception {
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a host, so bind fails with EADDRNOTAVAIL.
    MetricsOutputs metrics = MetricsOutputs.start(listening("192.0.2.1:9477"), outputs(), QUICK);
    try {
      Alert down = sink.await(a -> a.kind() == EventKind.METRICS_UNAVAILABLE, PATIENCE).alert();
      assertThat(down.field("SHM_REASON")).containsIgnoringCase("assign");
      Eventually.until("a retry thread", PATIENCE, () -> retryThreads() == 1);
      Thread.sleep(500);
      assertThat(metrics.port()).isEqualTo(-1);
      assertThat(sink.all()).hasSize(1);
    } finally {
      metrics.close();
    }
    Eventually.until("no retry thread after close", PATIENCE, () -> retryThreads() == 0);
  }

  @Test
  void closingWhileRetryingNeverBindsTheFreedPortLater() throws Exception {
    int port;
    try (ServerSocket squatter = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      port = squatter.getLocalPort();
      MetricsOutputs.start(listening("127.0.0.1:" + port), outputs(), QUICK).close();
    }
    Thread.sleep(600); // three tries' worth of backoff
    assertThatThrownBy(() -> {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 2000);
      }
    }).isInstanceOf(ConnectException.class);
    assertThat(sink.of(EventKind.METRICS_LISTENING)).isEmpty();
  }

  @Test
  void aFreePortListensAtOnceWithoutAlerts() throws Exception {
    try (MetricsOutputs metrics = MetricsOutputs.start(listening("127.0.0.1:0"), outputs(), QUICK)) {
      assertThat(metrics.port()).isPositive();
      assertThat(get(metrics.port(), "/-/healthy").statusCode()).isEqualTo(200);
      assertThat(sink.all()).isEmpty();
    }
  }

  @Test
  void backoffDoublesUpToItsCap() {
    MetricsPort.Backoff b = MetricsPort.Backoff.STANDARD;
    assertThat(b.first()).isEqualTo(Duration.ofSeconds(1));
    assertThat(b.after(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(2));
    assertThat(b.after(Duration.ofSeconds(32))).isEqualTo(Duration.ofSeconds(60));
    assertThat(b.after(Duration.ofSeconds(60))).isEqualTo(Duration.ofSeconds(60));
    assertThatThrownBy(() -> new MetricsPort.Backoff(Duration.ZERO, Duration.ofSeconds(1))).hasMessageContaining("first");
  }

  /** The value of the one sample of {@code name} whose labels contain {@code label}. */
  private static long retryThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("shmguard-metrics-retry") && t.isAlive()).count();
  }

  private static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
    return HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
