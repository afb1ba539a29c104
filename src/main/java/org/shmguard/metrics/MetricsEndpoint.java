package org.shmguard.metrics;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP port Prometheus scrapes, on the address {@code metrics.listen}: {@code /metrics}, a
 * liveness answer on {@code /}, a readiness answer on {@code /readyz} (see {@link Liveness}), and
 * {@code /-/healthy}, which says only that the port answers. One thread drives every connection through
 * a selector and never blocks on a client: a request head must arrive within
 * {@link #REQUEST_TIMEOUT}, an answer be taken within {@link #REPLY_TIMEOUT}, and at most
 * {@link #MAX_CONNECTIONS} are open. At that cap the oldest connection that has been sending its
 * request for a while makes room for the new one; when none has, new connections wait in the
 * kernel's backlog until one ends. A scrape serves the text {@link ScrapeText} rendered once per
 * change; the liveness answer reads one clock. So no client can hold up another's answer for
 * longer than one render.
 *
 * <pre>{@code
 * MetricsEndpoint port = MetricsEndpoint.start(metrics, "127.0.0.1:9477", liveness);
 * ...
 * port.close();
 * }</pre>
 */
public final class MetricsEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsEndpoint.class);
  static final int MAX_CONNECTIONS = 1024;
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
  static final Duration REPLY_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(1);
  /** A connection still sending its request after this long may be closed to make room. */
  private static final Duration EVICTABLE_AFTER = Duration.ofMillis(500);
  private static final Duration SWEEP_EVERY = Duration.ofMillis(100);
  private static final Duration WARN_EVERY = Duration.ofSeconds(10);
  private static final int BACKLOG = 1024;
  private static final byte[] HEALTHY = "Exporter is healthy.\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);

  private final ServerSocketChannel server;
  private final Selector selector;
  private final SelectionKey acceptKey;
  private final ScrapeText text;
  private final Liveness liveness;
  private final HttpConnection.Timeouts timeouts = new HttpConnection.Timeouts(REQUEST_TIMEOUT.toNanos(),
      REPLY_TIMEOUT.toNanos(), DRAIN_TIMEOUT.toNanos());
  /** Open connections, oldest first. */
  private final Set<HttpConnection> open = new LinkedHashSet<>();
  private final Thread loop;
  private volatile boolean closing;
  private long lastWarning = System.nanoTime() - WARN_EVERY.toNanos();
  private int evictedSinceWarning;

  private MetricsEndpoint(ServerSocketChannel server, Selector selector, ShmMetrics metrics, Liveness liveness)
      throws IOException {
    this.server = server;
    this.selector = selector;
    this.acceptKey = server.register(selector, SelectionKey.OP_ACCEPT);
    this.text = new ScrapeText(metrics);
    this.liveness = liveness;
    this.loop = new Thread(this::run, "shmguard-metrics");
    loop.setDaemon(true);
  }

  /**
   * Listens on {@code listen} ("host:port"; port 0 picks a free one): {@code /metrics} for
   * Prometheus, {@code /} for a liveness probe, {@code /readyz} for a readiness probe.
   */
  static MetricsEndpoint start(ShmMetrics metrics, String listen, Liveness liveness) throws IOException {
    int colon = listen.lastIndexOf(':');
    String host = listen.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port = Integer.parseInt(listen.substring(colon + 1));
    ServerSocketChannel server = ServerSocketChannel.open();
    Selector selector = null;
    try {
      server.bind(new InetSocketAddress(host, port), BACKLOG);
      server.configureBlocking(false);
      selector = Selector.open();
      MetricsEndpoint endpoint = new MetricsEndpoint(server, selector, metrics, liveness);
      endpoint.loop.start();
      return endpoint;
    } catch (IOException | RuntimeException e) {
      server.close();
      if (selector != null) {
        selector.close();
      }
      throw e;
    }
  }

  public int port() {
    return server.socket().getLocalPort();
  }

  private HttpReply route(String method, String path) throws IOException {
    return switch (path) {
      case "/metrics" -> new HttpReply(200, HttpReply.METRICS, text.current());
      case "/" -> liveness.answer();
      case "/readyz" -> liveness.readiness();
      case "/-/healthy" -> new HttpReply(200, HttpReply.TEXT, HEALTHY);
      default -> HttpReply.text(404, "not found; try /metrics\n");
    };
  }

  private void run() {
    long nextSweep = System.nanoTime();
    try {
      while (!closing) {
        // With no connection open there is no deadline to keep: block until a client comes (or
        // close() wakes it), so an idle daemon's metrics thread does not wake 10 times a second.
        selector.select(open.isEmpty() ? 0 : SWEEP_EVERY.toMillis());
        long now = System.nanoTime();
        Iterator<SelectionKey> ready = selector.selectedKeys().iterator();
        while (ready.hasNext()) {
          SelectionKey key = ready.next();
          ready.remove();
          if (!key.isValid()) {
            continue;
          }
          if (key == acceptKey) {
            acceptAll(now);
          } else {
            HttpConnection c = (HttpConnection) key.attachment();
            serve(c, now);
          }
        }
        if (now - nextSweep >= 0) {
          sweep(now);
          nextSweep = now + SWEEP_EVERY.toNanos();
        }
      }
    } catch (IOException | ClosedSelectorException e) {
      if (!closing) {
        LOG.error("the metrics port stopped: {}", e.toString());
      }
    } catch (RuntimeException e) {
      LOG.error("the metrics port stopped", e);
    } finally {
      for (HttpConnection c : open) {
        c.close();
      }
      open.clear();
    }
  }

  private void serve(HttpConnection c, long now) {
    try {
      c.onReady(this::route, now);
    } catch (RuntimeException e) {
      LOG.warn("metrics port: a request failed: {}", e.toString());
      c.expire();
    }
    if (c.stage() == HttpConnection.Stage.DONE) {
      c.close();
      open.remove(c);
      acceptKey.interestOps(SelectionKey.OP_ACCEPT);
    }
  }

  private void acceptAll(long now) throws IOException {
    while (true) {
      if (open.size() >= MAX_CONNECTIONS && !evictOne(now)) {
        acceptKey.interestOps(0); // the rest wait in the backlog until a connection ends
        return;
      }
      SocketChannel ch = server.accept();
      if (ch == null) {
        return;
      }
      ch.configureBlocking(false);
      HttpConnection c = new HttpConnection(ch, ch.register(selector, SelectionKey.OP_READ), now, timeouts);
      open.add(c);
      serve(c, now); // the request is usually there already: answer it now
    }
  }

  /** Closes the oldest connection that has been sending its request for a while; false when there is none. */
  private boolean evictOne(long now) {
    for (Iterator<HttpConnection> it = open.iterator(); it.hasNext(); ) {
      HttpConnection c = it.next();
      if (now - c.acceptedNanos() < EVICTABLE_AFTER.toNanos()) {
        return false; // the rest are younger still
      }
      if (c.stage() == HttpConnection.Stage.READING) {
        c.expire();
        c.close();
        it.remove();
        warnEvicted(now);
        return true;
      }
    }
    return false;
  }

  private void warnEvicted(long now) {
    evictedSinceWarning++;
    if (now - lastWarning >= WARN_EVERY.toNanos()) {
      LOG.warn("metrics port: {} connections open, the most it serves; closed {} that had not sent a whole request",
          open.size(), evictedSinceWarning);
      lastWarning = now;
      evictedSinceWarning = 0;
    }
  }

  /** Closes connections past their deadline, and accepts again: room was made, or an old request may now be evicted. */
  private void sweep(long now) {
    for (Iterator<HttpConnection> it = open.iterator(); it.hasNext(); ) {
      HttpConnection c = it.next();
      if (now - c.deadline() >= 0) {
        c.expire();
        c.close();
        it.remove();
      }
    }
    if (acceptKey.isValid()) {
      acceptKey.interestOps(SelectionKey.OP_ACCEPT);
    }
  }

  @Override
  public void close() {
    closing = true;
    selector.wakeup();
    try {
      loop.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      selector.close();
    } catch (IOException e) {
      // closing anyway
    }
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
