package org.shmguard.daemon;

import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.time.Duration;
import java.util.List;
import java.time.Clock;
import org.shmguard.advice.AdviceService;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.config.Config;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Outputs;
import org.shmguard.host.HostPaths;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.remedy.Remounter;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;

/**
 * The daemon as {@code shmguard daemon} runs it, assembled: the {@link Daemon} (its engine with
 * the remounter), and its outputs, each told every report: journald (or the log), the metrics
 * endpoint and textfile, the advice socket and file (which asks root's requests of the daemon),
 * systemd's status. The command line only loads
 * the configuration, starts this, and turns its ending into an exit status.
 *
 * <pre>{@code
 * try (Service s = Service.start(config, HostPaths.system())) {
 *   Service.Ending e = s.runUntilStopped(signals); // signals = ServiceSignals.catchNow(), before the start
 * }
 * }</pre>
 */
public final class Service implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Service.class);
  /** How long a stop request waits for the worker: well inside the unit's TimeoutStopSec (30 s). */
  public static final Duration STOP_GRACE = Duration.ofSeconds(5);
  private final MetricsOutputs metrics;
  private final AdviceService advice;
  private final Daemon daemon;
  private final HolderState state;
  private final ConfigReload reload;

  private Service(MetricsOutputs metrics, AdviceService advice, Daemon daemon, HolderState state, ConfigReload reload) {
    this.metrics = metrics;
    this.advice = advice;
    this.daemon = daemon;
    this.state = state;
    this.reload = reload;
  }

  /**
   * What the service needs beyond its configuration.
   *
   * @param stateDirectory where the holder history survives a restart (systemd's STATE_DIRECTORY,
   *     or --state-dir); null keeps none
   * @param reloadFrom reads the configuration again on SIGHUP; null: SIGHUP is not handled
   * @param logLevel sets log.level on a reload
   */
  public record Options(Path stateDirectory, ConfigSource reloadFrom, Consumer<String> logLevel) {
    public static final Options NONE = new Options(null, null, level -> {});

    public Options {
      logLevel = logLevel == null ? level -> {} : logLevel;
    }
  }

  /** Reads the configuration again for a reload: what start-up read (the file given, or the system file), with its drop-ins. */
  public interface ConfigSource {
    Config load() throws org.shmguard.config.ConfigException;
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
    return start(config, paths, Options.NONE);
  }

  /** As above, keeping the holder history in {@code options}' state directory and reloading on SIGHUP. */
  public static Service start(Config config, HostPaths paths, Options options) throws IOException {
    AlertSink journal = JournalAlertSink.choose();
    if (Boolean.getBoolean("shmguard.training")) {
      // make-cds-archive's training run (a dry run, to record the daemon's classes): its findings are no alerts.
      journal = new LogAlertSink();
    }
    Outputs outputs = new Outputs(journal.describe()).add(new AlertOutput(journal));
    MetricsOutputs metrics = MetricsOutputs.start(config, outputs);
    AdviceService advice = null;
    Daemon daemon = null;
    try {
      Remounter remounter = Remounter.create(config.remount(), paths, Clock.systemUTC()).dryRun(config.reap().dryRun());
      HolderState state = HolderState.at(options.stateDirectory(), paths);
      ServiceNotifier notifier = ServiceNotifier.fromEnvironment();
      daemon = Daemon.create(config, paths, outputs, notifier, remounter, PassThread.DEADLINE, state);
      // RELOAD's handler is in place before the socket answers: a reload asked the moment it listens is run, not
      // told that this daemon has no configuration file (seen once in ConfigReloadTest)
      ConfigReload reload = options.reloadFrom() == null ? null
          : new ConfigReload(options.reloadFrom(), config, daemon, options.logLevel(), outputs.sink(), notifier);
      if (reload != null) {
        daemon.reloadWith(reload);
      }
      advice = startAdvice(config, paths, daemon, metrics);
      if (advice != null) {
        outputs.add(advice);
      }
      daemon.begin();
      return new Service(metrics, advice, daemon, state, reload);
    } catch (IOException | RuntimeException | Error e) {
      if (daemon != null) {
        daemon.close();
      }
      if (advice != null) {
        advice.close();
      }
      metrics.close();
      throw e;
    }
  }

  /**
   * Opens the advice socket (if enabled) before the daemon starts, so it answers once READY is
   * sent. A socket it cannot make is logged and the daemon goes on without it (null); another
   * daemon answering there is thrown ({@link SocketInUseException}): this one must not start.
   */
  private static AdviceService startAdvice(Config config, HostPaths paths, Daemon daemon, MetricsOutputs metrics)
      throws IOException {
    if (!config.advice().enabled()) {
      return null;
    }
    try {
      return AdviceService.start(config, paths, daemon.rootRequests(), metrics::adviceAnswered);
    } catch (SocketInUseException e) {
      throw e;
    } catch (IOException e) {
      LOG.error("no advice socket: {}; reaping goes on without it", e.getMessage());
      return null;
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
  public Ending runUntilStopped(ServiceSignals signals) throws InterruptedException {
    signals.attach(daemon::stop, reload == null ? null : reload::reload);
    while (!daemon.awaitStopped(Duration.ofSeconds(1)) && !signals.stopAsked()) {
      // runs until a signal stops it, or the worker fails
    }
    boolean stopped = daemon.awaitStopped(STOP_GRACE);
    if (stopped) {
      daemon.close();
      state.close(); // the last pass's history written before the process exits
    }
    return new Ending(!stopped, daemon.failed());
  }

  /** Closes the advice socket, then the metrics. */
  @Override
  public void close() throws IOException {
    try {
      if (advice != null) {
        advice.close();
      }
    } finally {
      metrics.close();
    }
  }
}
