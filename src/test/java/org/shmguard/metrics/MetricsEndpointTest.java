package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.ThreadWakeups;

/**
 * The metrics port on a real loopback port: what each path answers, that a client which never
 * finishes its request is closed without holding up another, and that its thread sleeps while no
 * connection is open, and still answers and stops.
 */
class MetricsEndpointTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  @Test
  void eachPathAnswersWhatItPromises() throws Exception {
    Liveness liveness = Liveness.forInterval(Duration.ofSeconds(30));
    try (MetricsEndpoint endpoint = MetricsEndpoint.start(ShmMetrics.create(), "127.0.0.1:0", liveness)) {
      HttpResponse<String> metrics = get(endpoint, "/metrics?x=1");
      assertThat(metrics.statusCode()).isEqualTo(200);
      assertThat(metrics.headers().firstValue("Content-Type")).contains(HttpReply.METRICS);
      assertThat(metrics.body()).contains("# TYPE shmguard_");
      assertThat(get(endpoint, "/-/healthy").body()).isEqualTo("Exporter is healthy.\n");
      assertThat(get(endpoint, "/").body()).startsWith("ok: last pass ");
      HttpResponse<String> notReady = get(endpoint, "/readyz");
      assertThat(notReady.statusCode()).isEqualTo(503);
      assertThat(notReady.body()).startsWith("not ready: no pass completed yet");
      liveness.passCompleted();
      assertThat(get(endpoint, "/readyz").statusCode()).isEqualTo(200);
      HttpResponse<String> unknown = get(endpoint, "/metric");
      assertThat(unknown.statusCode()).isEqualTo(404);
      assertThat(unknown.body()).isEqualTo("not found; try /metrics\n");
    }
  }

  @Test
  void aClientThatNeverFinishesItsRequestIsClosedAndHoldsUpNoOther() throws Exception {
    try (MetricsEndpoint endpoint = MetricsEndpoint.start(ShmMetrics.create(), "127.0.0.1:0",
        Liveness.forInterval(Duration.ofSeconds(30)));
        Socket slow = new Socket("127.0.0.1", endpoint.port())) {
      slow.getOutputStream().write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
      long started = System.nanoTime();

      assertThat(get(endpoint, "/metrics").statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(MetricsEndpoint.REQUEST_TIMEOUT);

      slow.setSoTimeout((int) MetricsEndpoint.REQUEST_TIMEOUT.multipliedBy(3).toMillis());
      String answer = new String(slow.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertThat(answer).startsWith("HTTP/1.1 408 ");
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(MetricsEndpoint.REQUEST_TIMEOUT);
    }
  }

  @Test
  void anAddressInUseIsRefusedAtStart() throws Exception {
    try (MetricsEndpoint endpoint = MetricsEndpoint.start(ShmMetrics.create(), "127.0.0.1:0",
        Liveness.forInterval(Duration.ofSeconds(30)))) {
      assertThatThrownBy(() -> MetricsEndpoint.start(ShmMetrics.create(), "127.0.0.1:" + endpoint.port(),
          Liveness.forInterval(Duration.ofSeconds(30)))).isInstanceOf(java.net.BindException.class);
    }
  }

  private static HttpResponse<String> get(MetricsEndpoint endpoint, String path) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + endpoint.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void withNoConnectionOpenTheMetricsThreadSleepsAndStillAnswersAndStops() throws Exception {
    MetricsEndpoint endpoint = MetricsEndpoint.start(ShmMetrics.create(), "127.0.0.1:0", Liveness.forInterval(Duration.ofSeconds(30)));
    try {
      HttpClient client = HttpClient.newHttpClient();
      URI uri = URI.create("http://127.0.0.1:" + endpoint.port() + "/metrics");
      assertThat(client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      Thread.sleep(500); // the client's connection closes
      long before = ThreadWakeups.of("shmguard-metric");

      Thread.sleep(2000);
      long wakeups = ThreadWakeups.of("shmguard-metric") - before;

      assertThat(wakeups).as("wakeups in 2 idle seconds (a 100 ms poll would be about 20)").isLessThanOrEqualTo(2);
      assertThat(client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
    } finally {
      endpoint.close();
    }
    Eventually.until("the metrics thread ends after close()", Duration.ofSeconds(10),
        () -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("shmguard-metrics")));
  }
}
