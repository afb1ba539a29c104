package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The liveness answer on the metrics port, as a Kubernetes probe reads it. */
class LivenessTest {
  @Test
  void rootAnswersOkWhilePassesComplete() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Config config = TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
          + "metrics:\n  listen: \"127.0.0.1:0\"\n"));
      try (MetricsOutputs metrics = MetricsOutputs.start(config)) {
        metrics.passCompleted(Engine.create(config, HostPaths.system()).clean(false), Duration.ofMillis(3));

        HttpResponse<String> r = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/")).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("ok: last pass ");
        HttpResponse<String> healthy = HttpClient.newHttpClient().send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + "/-/healthy")).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(healthy.statusCode()).isEqualTo(200);
      }
    }
  }
}
