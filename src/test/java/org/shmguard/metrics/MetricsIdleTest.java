package org.shmguard.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.ThreadWakeups;

/** The metrics port's thread sleeps while no connection is open, and still answers and stops. */
class MetricsIdleTest {

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
