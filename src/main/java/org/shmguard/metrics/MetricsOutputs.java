package org.shmguard.metrics;

import java.nio.file.Path;
import java.time.Duration;
import org.shmguard.config.Config;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.engine.Engine;
import org.shmguard.model.ShmMount;

/**
 * The daemon's metrics as configured: the HTTP endpoint ({@code metrics.listen}) and the
 * node_exporter textfile ({@code metrics.textfile}), rewritten after every pass on a thread of
 * its own.
 */
public final class MetricsOutputs implements MetricsSink, AutoCloseable {
  private final ShmMetrics metrics;
  private final Textfile textfile;
  private final Liveness liveness;
  /** Set once in start(), before anyone else sees this. */
  private MetricsPort endpoint;

  private MetricsOutputs(ShmMetrics metrics, Liveness liveness, Textfile textfile) {
    this.liveness = liveness;
    this.metrics = metrics;
    this.textfile = textfile;
  }

  /**
   * Starts what {@code config} asks for. An address it cannot listen on now is not an error: the
   * endpoint is tried again in the background (see {@link MetricsPort}), and {@code alerts} is
   * told once that it is unavailable and once that it listens; both alerts are counted here too.
   */
  public static MetricsOutputs start(Config config, AlertSink alerts) {
    return start(config, alerts, MetricsPort.Backoff.STANDARD);
  }

  /** As above, with alerts going to the log. */
  public static MetricsOutputs start(Config config) {
    return start(config, new LogAlertSink());
  }

  static MetricsOutputs start(Config config, AlertSink alerts, MetricsPort.Backoff backoff) {
    Config.Metrics m = config.metrics();
    ShmMetrics metrics = ShmMetrics.create();
    Liveness liveness = Liveness.forInterval(config.daemon().interval());
    MetricsOutputs outputs = new MetricsOutputs(metrics, liveness,
        m.writesTextfile() ? new Textfile(Path.of(m.textfile())) : null);
    if (m.serves()) {
      outputs.endpoint = MetricsPort.open(metrics, m.listen(), liveness, backoff, new CountingAlertSink(alerts, outputs));
    }
    return outputs;
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
  public void alertRaised(String kind, String mount, String container, String scope, String ownerUid) {
    metrics.alertRaised(kind, mount, container, scope, ownerUid);
  }

  @Override
  public void adviceAnswered(String advice, ShmMount mount) {
    metrics.adviceAnswered(advice, mount);
  }

  @Override
  public void remounted(String mount, String container, String result) {
    metrics.remounted(mount, container, result);
  }

  /** The port the endpoint listens on, or -1 when it is off or not listening yet. */
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
