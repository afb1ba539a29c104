package org.shmguard.metrics;

import java.nio.file.Path;
import java.time.Duration;
import org.shmguard.config.Config;
import org.shmguard.alert.Alert;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Output;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.model.ShmMount;

/**
 * The daemon's metrics as configured, one of its outputs: the HTTP endpoint
 * ({@code metrics.listen}) and the node_exporter textfile ({@code metrics.textfile}), rewritten
 * after every pass on a thread of its own. Everything is counted from the reports: a pass's
 * judgement and reap outcomes, each remount's outcome, each alert by kind.
 *
 * <pre>{@code
 * Outputs outputs = new Outputs(journal.describe()).add(new AlertOutput(journal));
 * MetricsOutputs metrics = MetricsOutputs.start(config, outputs); // one of the outputs now
 * }</pre>
 */
public final class MetricsOutputs implements MetricsSink, Output, AutoCloseable {
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
   * Starts what {@code config} asks for and adds itself to {@code outputs}, the daemon's. An address
   * it cannot listen on now is not an error: the endpoint is tried again in the background (see
   * {@link MetricsPort}), and {@code outputs} is told once that it is unavailable and once that it
   * listens, each as a report between passes: journald and the alert counter hear of them as of any
   * other alert, through the one path.
   */
  public static MetricsOutputs start(Config config, Outputs outputs) {
    return start(config, outputs, MetricsPort.Backoff.STANDARD);
  }

  /** As above, on its own: the port's alerts go to the log (and are counted here). */
  public static MetricsOutputs start(Config config) {
    LogAlertSink log = new LogAlertSink();
    return start(config, new Outputs(log.describe()).add(new AlertOutput(log)));
  }

  static MetricsOutputs start(Config config, Outputs outputs, MetricsPort.Backoff backoff) {
    Config.Metrics m = config.metrics();
    ShmMetrics metrics = ShmMetrics.create();
    Liveness liveness = Liveness.forInterval(config.daemon().interval());
    MetricsOutputs started = new MetricsOutputs(metrics, liveness,
        m.writesTextfile() ? new Textfile(Path.of(m.textfile())) : null);
    outputs.add(started); // before the port: its first alert, raised while it opens, is counted
    if (m.serves()) {
      started.endpoint = MetricsPort.open(metrics, m.listen(), liveness, backoff, outputs.sink());
    }
    return started;
  }

  /** Counts what {@code report} says: the pass, each remount, each alert. */
  @Override
  public void export(PassReport report) {
    if (report.isPass()) {
      passCompleted(report, report.took());
    } else if (report.kind() == PassReport.Kind.EXIT) {
      metrics.reaped(report.outcomes());
    }
    report.remounts().forEach(this::remounted);
    report.alerts().forEach(this::count);
  }

  private void count(Alert alert) {
    metrics.alertRaised(alert.kind().label(), alert.field("SHM_MOUNT"), alert.field("SHM_CONTAINER"),
        alert.field("SHM_SCOPE"), alert.field("SHM_OWNER_UID"));
  }

  @Override
  public void passCompleted(PassReport pass, Duration took) {
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
