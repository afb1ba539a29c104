package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.advice.ScanAnswer;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.config.Config;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.CountingAlertSink;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;

/**
 * The daemon as {@code shmguard daemon} runs it, assembled: alerts to journald (or the log),
 * counted in the metrics; the metrics endpoint and textfile; the advice socket and file; the
 * remounter; and the {@link Daemon} whose plans reach all of them. The command line only loads
 * the configuration, starts this, and turns its ending into an exit status.
 *
 * <pre>{@code
 * try (Service s = Service.start(config, HostPaths.system())) {
 *   Service.Ending e = s.runUntilStopped();
 * }
 * }</pre>
 */
public final class Service implements AutoCloseable {
  /** How long a stop request waits for the worker: well inside the unit's TimeoutStopSec (30 s). */
  public static final Duration STOP_GRACE = Duration.ofSeconds(5);
  private final MetricsOutputs metrics;
  private final DaemonAdvice advice;
  private final Daemon daemon;

  private Service(MetricsOutputs metrics, DaemonAdvice advice, Daemon daemon) {
    this.metrics = metrics;
    this.advice = advice;
    this.daemon = daemon;
  }

  /**
   * Starts everything; the first pass runs at once. A metrics port it cannot listen on is alerted
   * and retried, never a reason not to start; a socket it cannot make is logged and the daemon
   * goes on without it.
   *
   * @throws SocketInUseException another shmguard answers on the advice socket: this one must not start
   * @throws IOException the daemon itself cannot start (its inotify instance, its schedules)
   */
  public static Service start(Config config, HostPaths paths) throws IOException {
    return start(config, paths, null);
  }

  /** As {@link #start(Config, HostPaths)}, answering SCAN on the socket with {@code scans} (null: no SCAN). */
  public static Service start(Config config, HostPaths paths, ScanAnswer.Renderer scans) throws IOException {
    AlertSink journal = JournalAlertSink.choose();
    if (Boolean.getBoolean("shmguard.training")) {
      // make-cds-archive's training run (a dry run, to record the daemon's classes): its findings are no alerts.
      journal = new LogAlertSink();
    }
    MetricsOutputs metrics = MetricsOutputs.start(config, journal);
    DaemonAdvice advice = null;
    try {
      AlertSink sink = new CountingAlertSink(journal, metrics);
      advice = DaemonAdvice.start(config, paths, sink, metrics::remounted, metrics::adviceAnswered, scans);
      Daemon daemon = Daemon.start(config, paths, sink, ServiceNotifier.fromEnvironment(), advice.acts(sink),
          List.of(pass -> metrics.passCompleted(pass, pass.took())), PassThread.DEADLINE);
      advice.attach(daemon);
      return new Service(metrics, advice, daemon);
    } catch (IOException | RuntimeException e) {
      if (advice != null) {
        advice.close();
      }
      metrics.close();
      throw e;
    }
  }

  /**
   * How the service ended.
   *
   * @param stuck the worker did not stop within {@link #STOP_GRACE} (a thread waits on a
   *     filesystem that stopped answering): the process should exit without it
   * @param failed the worker stopped on an error, not on request
   */
  public record Ending(boolean stuck, boolean failed) {}

  /** Runs until SIGTERM or SIGINT, or until the worker fails; then stops the daemon. */
  public Ending runUntilStopped() throws InterruptedException {
    CountDownLatch asked = new CountDownLatch(1);
    StopSignals.onTermOrInt(() -> {
      asked.countDown();
      daemon.stop();
    });
    while (!daemon.awaitStopped(Duration.ofSeconds(1)) && asked.getCount() > 0) {
      // runs until a signal stops it, or the worker fails
    }
    boolean stopped = daemon.awaitStopped(STOP_GRACE);
    if (stopped) {
      daemon.close();
    }
    return new Ending(!stopped, daemon.failed());
  }

  /** Closes the advice socket, then the metrics. */
  @Override
  public void close() throws IOException {
    try {
      advice.close();
    } finally {
      metrics.close();
    }
  }
}
