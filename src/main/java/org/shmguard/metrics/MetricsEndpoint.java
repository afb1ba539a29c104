package org.shmguard.metrics;

import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HTTP endpoint Prometheus scrapes ({@code /metrics}), on the address {@code metrics.listen}
 * names, with a liveness answer on {@code /}. One thread: a scrape only formats the latest pass.
 */
public final class MetricsEndpoint implements AutoCloseable {
  private final HTTPServer server;

  private MetricsEndpoint(HTTPServer server) {
    this.server = server;
  }

  /**
   * Listens on {@code listen} ("host:port"; port 0 picks a free one): {@code /metrics} for
   * Prometheus, {@code /} for a liveness probe.
   */
  static MetricsEndpoint start(ShmMetrics metrics, String listen, Liveness liveness) throws IOException {
    int colon = listen.lastIndexOf(':');
    String host = listen.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port = Integer.parseInt(listen.substring(colon + 1));
    ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "shmguard-metrics");
      t.setDaemon(true);
      return t;
    });
    try {
      return new MetricsEndpoint(HTTPServer.builder().hostname(host).port(port).registry(metrics.registry())
          .defaultHandler(liveness).executorService(executor).buildAndStart());
    } catch (IOException | RuntimeException e) {
      executor.shutdownNow();
      throw e;
    }
  }

  public int port() {
    return server.getPort();
  }

  @Override
  public void close() {
    server.close();
  }
}
