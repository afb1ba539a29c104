package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * What slow and many clients do to the metrics port, for real: the daemon's endpoint on a
 * loopback port, raw TCP clients that send half a request or come a thousand at once, and what
 * Prometheus and a liveness probe then get.
 */
class MetricsPortLimitsTest {
  private static final String HALF_REQUEST = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n";
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
    assertThat(get("/metrics").statusCode()).isEqualTo(200); // the client warmed up: later timings are the server's
  }

  @AfterEach
  void stop() throws Exception {
    if (metrics != null) {
      metrics.close();
    }
    shm.close();
  }

  @Test
  void aHalfSentRequestHoldsUpNeitherScrapesNorLivenessAndIsDroppedSoon() throws Exception {
    try (SocketChannel half = SocketChannel.open(new InetSocketAddress("127.0.0.1", metrics.port()))) {
      half.write(ByteBuffer.wrap(HALF_REQUEST.getBytes(StandardCharsets.US_ASCII)));
      long t0 = System.nanoTime();

      HttpResponse<String> scrape = get("/metrics");
      HttpResponse<String> live = get("/");

      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(scrape.body()).contains("shmguard_passes_total 1");
      assertThat(live.statusCode()).isEqualTo(200);
      assertThat(live.body()).startsWith("ok: last pass ");
      half.configureBlocking(false);
      assertThat(half.read(ByteBuffer.allocate(1))).as("answered while the half-sent request was still waiting").isZero();
      half.configureBlocking(true);

      String dropped = readAll(half);
      Duration held = Duration.ofNanos(System.nanoTime() - t0);
      assertThat(dropped).startsWith("HTTP/1.1 408 ");
      assertThat(held).isBetween(Duration.ofMillis(1500), Duration.ofSeconds(10));
    }
  }

  @Test
  void aThousandConcurrentScrapesAreAllAnsweredWithTheMetrics() throws Exception {
    Map<Integer, Integer> statuses = scrapeConcurrently(1000, Duration.ofSeconds(120));

    assertThat(statuses).containsExactly(Map.entry(200, 1000));
  }

  @Test
  void moreHalfSentRequestsThanTheServerHoldsStillLetLivenessThrough() throws Exception {
    List<SocketChannel> hostile = new ArrayList<>();
    try {
      for (int i = 0; i < 1100; i++) {
        SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", metrics.port()));
        c.write(ByteBuffer.wrap(HALF_REQUEST.getBytes(StandardCharsets.US_ASCII)));
        hostile.add(c);
      }
      long t0 = System.nanoTime();
      HttpResponse<String> live = get("/");
      HttpResponse<String> scrape = get("/metrics");

      assertThat(live.statusCode()).isEqualTo(200);
      assertThat(scrape.statusCode()).isEqualTo(200);
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    } finally {
      for (SocketChannel c : hostile) {
        c.close();
      }
    }
  }

  @Test
  void unknownPathsAndMethodsGetTheirStatus() throws Exception {
    assertThat(get("/nothing").statusCode()).isEqualTo(404);
    assertThat(get("/-/healthy").statusCode()).isEqualTo(200);
    HttpResponse<String> post = http.send(HttpRequest.newBuilder(uri("/metrics")).POST(HttpRequest.BodyPublishers.ofString("x"))
        .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(post.statusCode()).isEqualTo(405);
    try (SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", metrics.port()))) {
      c.write(ByteBuffer.wrap(("GET /metrics HTTP/1.1\r\nX-Long: " + "a".repeat(10_000) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
      assertThat(readAll(c)).startsWith("HTTP/1.1 431 ");
    }
  }

  /**
   * {@code n} scrapes open at once from one selector thread (each connects and sends its request
   * at once, as Prometheus does), read to the end; the count of each status, -1 for no answer.
   */
  private Map<Integer, Integer> scrapeConcurrently(int n, Duration limit) throws IOException {
    Map<Integer, Integer> statuses = new HashMap<>();
    byte[] request = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    try (Selector selector = Selector.open()) {
      Map<SocketChannel, StringBuilder> replies = new HashMap<>();
      for (int i = 0; i < n; i++) {
        SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", metrics.port()));
        c.write(ByteBuffer.wrap(request));
        c.configureBlocking(false);
        c.register(selector, SelectionKey.OP_READ);
        replies.put(c, new StringBuilder());
      }
      long end = System.nanoTime() + limit.toNanos();
      ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
      int open = n;
      while (open > 0 && System.nanoTime() < end) {
        selector.select(1000);
        for (SelectionKey key : selector.selectedKeys()) {
          SocketChannel c = (SocketChannel) key.channel();
          buf.clear();
          int r;
          try {
            r = c.read(buf);
          } catch (IOException e) {
            r = -1;
          }
          if (r > 0) {
            StringBuilder sb = replies.get(c);
            if (sb.length() < 64) {
              sb.append(new String(buf.array(), 0, Math.min(r, 64), StandardCharsets.ISO_8859_1));
            }
          } else if (r < 0) {
            key.cancel();
            c.close();
            open--;
          }
        }
        selector.selectedKeys().clear();
      }
      for (Map.Entry<SocketChannel, StringBuilder> e : replies.entrySet()) {
        String head = e.getValue().toString();
        int status = head.startsWith("HTTP/1.1 ") ? Integer.parseInt(head.substring(9, 12)) : -1;
        statuses.merge(status, 1, Integer::sum);
        e.getKey().close();
      }
    }
    return statuses;
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + metrics.port() + path);
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String readAll(SocketChannel c) throws IOException {
    StringBuilder sb = new StringBuilder();
    ByteBuffer buf = ByteBuffer.allocate(8192);
    try {
      while (c.read(buf) >= 0) {
        sb.append(new String(buf.array(), 0, buf.position(), StandardCharsets.ISO_8859_1));
        buf.clear();
      }
    } catch (IOException e) {
      // a reset after the answer: what came before it is what the client saw
    }
    return sb.toString();
  }
}
