package org.shmguard.metrics;

import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.text.Durations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metrics endpoint as the daemon keeps it: listening from the start when it can. When it
 * cannot (another program holds the port, the address is not on this host yet) that is an
 * operational fault, not a bad configuration: the daemon goes on without its port, raises one
 * {@code metrics_unavailable} alert, and tries again with backoff on a thread of its own (never
 * the worker's) until it listens, which raises one {@code metrics_listening}, or it is closed.
 *
 * <pre>{@code
 * MetricsPort port = MetricsPort.open(metrics, "127.0.0.1:9477", liveness, Backoff.STANDARD, sink);
 * ...
 * port.close();
 * }</pre>
 */
final class MetricsPort implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsPort.class);

  /** How long to wait before each new try: {@code first}, doubling up to {@code max}. */
  record Backoff(Duration first, Duration max) {
    /** 1 s doubling to 60 s: quick after a restart's clash, at most one try a minute after that. */
    static final Backoff STANDARD = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60));

    Backoff {
      Objects.requireNonNull(first, "first");
      Objects.requireNonNull(max, "max");
      if (first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
        throw new IllegalArgumentException("backoff: first must be positive and max at least first, got " + first + " and " + max);
      }
    }

    Duration after(Duration previous) {
      Duration doubled = previous.multipliedBy(2);
      return doubled.compareTo(max) > 0 ? max : doubled;
    }
  }

  private final ShmMetrics metrics;
  private final String listen;
  private final Liveness liveness;
  private final Backoff backoff;
  private final AlertSink alerts;
  /** Made on the first failure only; one thread, so tries never overlap. */
  private ScheduledExecutorService retries;
  private MetricsEndpoint endpoint;
  private boolean closed;
  private int failedTries;

  private MetricsPort(ShmMetrics metrics, String listen, Liveness liveness, Backoff backoff, AlertSink alerts) {
    this.metrics = metrics;
    this.listen = listen;
    this.liveness = liveness;
    this.backoff = backoff;
    this.alerts = alerts;
  }

  /** Listens on {@code listen} now if it can; otherwise alerts once and keeps trying in the background. */
  static MetricsPort open(ShmMetrics metrics, String listen, Liveness liveness, Backoff backoff, AlertSink alerts) {
    MetricsPort port = new MetricsPort(metrics, listen, liveness, backoff, alerts);
    synchronized (port) {
      Exception e = port.tryListen();
      if (e != null) {
        port.retries = Executors.newSingleThreadScheduledExecutor(r -> {
          Thread t = new Thread(r, "shmguard-metrics-retry");
          t.setDaemon(true);
          return t;
        });
        alerts.emit(Alert.of(EventKind.METRICS_UNAVAILABLE, "cannot serve metrics on " + listen + " (" + reason(e)
                + "); shmguard goes on without its metrics port and tries again in " + Durations.human(backoff.first())
                + ", then at most every " + Durations.human(backoff.max()))
            .with("SHM_LISTEN", listen)
            .with("SHM_REASON", reason(e)));
        port.schedule(backoff.first());
      }
    }
    return port;
  }

  /** The port it listens on, or -1 while it does not. */
  synchronized int port() {
    return endpoint == null ? -1 : endpoint.port();
  }

  /** One try; null when it now listens, else what stopped it. */
  private Exception tryListen() {
    try {
      endpoint = MetricsEndpoint.start(metrics, listen, liveness);
      LOG.info("serving metrics on http://{}:{}/metrics", listen.substring(0, listen.lastIndexOf(':')), endpoint.port());
      return null;
    } catch (IOException | RuntimeException e) {
      // RuntimeException: a host name that does not resolve (UnresolvedAddressException), which may resolve later.
      return e;
    }
  }

  private void schedule(Duration delay) {
    retries.schedule(() -> retry(delay), delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  private synchronized void retry(Duration waited) {
    if (closed) {
      return;
    }
    failedTries++;
    Exception e = tryListen();
    if (e == null) {
      alerts.emit(Alert.of(EventKind.METRICS_LISTENING, "serving metrics on " + listen + " again, after "
              + failedTries + (failedTries == 1 ? " more try" : " more tries"))
          .with("SHM_LISTEN", listen)
          .with("SHM_PORT", endpoint.port()));
      retries.shutdown();
      return;
    }
    Duration next = backoff.after(waited);
    LOG.debug("metrics port: still cannot listen on {} ({}); next try in {}", listen, reason(e), Durations.human(next));
    schedule(next);
  }

  private static String reason(Exception e) {
    if (e instanceof java.nio.channels.UnresolvedAddressException) {
      return "the address does not resolve";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  /** Stops trying and closes the port. */
  @Override
  public void close() {
    MetricsEndpoint open;
    synchronized (this) {
      closed = true;
      if (retries != null) {
        retries.shutdownNow();
      }
      open = endpoint;
      endpoint = null;
    }
    if (open != null) {
      open.close();
    }
  }
}
