package org.shmguard.metrics;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigException;
import org.shmguard.engine.Engine;
import org.shmguard.model.ShmMount;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's metrics as configured: the HTTP endpoint ({@code metrics.listen}) and the
 * node_exporter textfile ({@code metrics.textfile}), rewritten after every pass on a thread of
 * its own.
 */
public final class MetricsOutputs implements MetricsSink, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsOutputs.class);
  private final ShmMetrics metrics;
  private final MetricsEndpoint endpoint;
  private final Textfile textfile;
  private final Liveness liveness;

  private MetricsOutputs(ShmMetrics metrics, MetricsEndpoint endpoint, Textfile textfile, Liveness liveness) {
    this.liveness = liveness;
    this.metrics = metrics;
    this.endpoint = endpoint;
    this.textfile = textfile;
  }

  /** Starts what {@code config} asks for; an address it cannot listen on is a configuration error. */
  public static MetricsOutputs start(Config config) throws ConfigException {
    Config.Metrics m = config.metrics();
    ShmMetrics metrics = ShmMetrics.create();
    MetricsEndpoint endpoint = null;
    Liveness liveness = Liveness.forInterval(config.daemon().interval());
    if (m.serves()) {
      try {
        endpoint = MetricsEndpoint.start(metrics, m.listen(), liveness);
        LOG.info("serving metrics on http://{}:{}/metrics", m.listen().substring(0, m.listen().lastIndexOf(':')), endpoint.port());
      } catch (IOException | RuntimeException e) {
        throw new ConfigException(config.source(), 0, "metrics.listen",
            "cannot listen on " + m.listen() + " (" + e.getMessage() + "); choose another address or \"\" to turn it off");
      }
    }
    return new MetricsOutputs(metrics, endpoint, m.writesTextfile() ? new Textfile(Path.of(m.textfile())) : null, liveness);
  }

  @Override
  public void passCompleted(Engine.Pass pass, Duration took) {
    metrics.passCompleted(pass, took);
    liveness.passCompleted();
    if (textfile != null) {
      textfile.write(metrics.scrape()); // written on the textfile's own thread, never this one
    }
  }

  @Override
  public void alertRaised(String kind, String mount, String container) {
    metrics.alertRaised(kind, mount, container);
  }

  @Override
  public void adviceAnswered(String advice, ShmMount mount) {
    metrics.adviceAnswered(advice, mount);
  }

  @Override
  public void remounted(String mount, String container, String result) {
    metrics.remounted(mount, container, result);
  }

  /** The port the endpoint listens on, or -1 when it is off. */
  public int port() {
    return endpoint == null ? -1 : endpoint.port();
  }

  @Override
  public void close() {
    if (endpoint != null) {
      endpoint.close();
    }
    if (textfile != null) {
      textfile.close();
    }
  }
}
