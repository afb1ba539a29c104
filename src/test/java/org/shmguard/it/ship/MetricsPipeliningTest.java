package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A local user who pipelines thousands of requests on one connection, or streams binary junk at
 * the metrics port: that connection gets one answer and is closed, and liveness and /metrics keep
 * answering everyone else at once meanwhile.
 */
class MetricsPipeliningTest {
  private TmpfsMount shm;
  private MetricsOutputs metrics;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

  @BeforeEach
  void start() throws Exception {
    shm = TmpfsMount.create("size=1m");
    Config config = TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
        + "metrics:\n  listen: \"127.0.0.1:0\"\n"));
    metrics = MetricsOutputs.start(config);
    metrics.passCompleted(Engine.create(config, HostPaths.system()).clean(false), Duration.ofMillis(3));
    assertThat(get("/metrics").statusCode()).isEqualTo(200);
  }

  @AfterEach
  void stop() throws Exception {
    if (metrics != null) {
      metrics.close();
    }
    shm.close();
  }

  @Test
  void thousandsOfPipelinedRequestsGetOneAnswerAndOthersAreServedMeanwhile() throws Exception {
    byte[] one = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    ByteBuffer many = ByteBuffer.allocate(one.length * 2000);
    while (many.remaining() >= one.length) {
      many.put(one);
    }
    String answer = flood(many.array(), many.position());

    assertThat(answer).startsWith("HTTP/1.1 200");
    assertThat(answer.split("HTTP/1.1 ", -1)).as("answers on the connection").hasSize(2);
  }

  @Test
  void binaryJunkGetsAnErrorAndOthersAreServedMeanwhile() throws Exception {
    byte[] junk = new byte[256 * 1024];
    new Random(12).nextBytes(junk);
    String answer = flood(junk, junk.length);

    assertThat(answer).matches("(?s)HTTP/1.1 4\\d\\d .*");
  }

  /** Sends {@code bytes} over and over for 3 s on one connection while others ask; that connection's answer. */
  private String flood(byte[] bytes, int length) throws Exception {
    AtomicBoolean done = new AtomicBoolean();
    StringBuilder got = new StringBuilder();
    Thread sender = new Thread(() -> {
      try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", metrics.port()))) {
        c.configureBlocking(false);
        ByteBuffer in = ByteBuffer.allocate(1 << 16);
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        while (System.nanoTime() < end) {
          try {
            c.write(ByteBuffer.wrap(bytes, 0, length));
          } catch (IOException e) {
            break; // the server closed its side: what it answered is in
          }
          in.clear();
          int n = c.read(in);
          if (n < 0) {
            break;
          }
          got.append(new String(in.array(), 0, Math.max(0, n), StandardCharsets.ISO_8859_1));
        }
        c.configureBlocking(true);
        in.clear();
        try {
          for (int n; (n = c.read(in)) > 0; in.clear()) {
            got.append(new String(in.array(), 0, n, StandardCharsets.ISO_8859_1));
          }
        } catch (IOException e) {
          // reset after its answer
        }
      } catch (IOException e) {
        got.append("client error: ").append(e);
      } finally {
        done.set(true);
      }
    });
    sender.start();
    int asked = 0;
    // At least once, however soon the server answers the flood and closes it (it may do so in
    // milliseconds, before a first request here would start).
    do {
      long t0 = System.nanoTime();
      assertThat(get("/").statusCode()).isEqualTo(200);
      assertThat(get("/metrics").statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("liveness and /metrics meanwhile")
          .isLessThan(Duration.ofSeconds(5));
      asked++;
    } while (!done.get());
    sender.join();
    assertThat(asked).isPositive();
    return got.toString();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + metrics.port() + path))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
