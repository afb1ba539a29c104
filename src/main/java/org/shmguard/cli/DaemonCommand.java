package org.shmguard.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.config.Config;
import org.shmguard.daemon.AlertSink;
import org.shmguard.daemon.Daemon;
import org.shmguard.daemon.LogAlertSink;
import org.shmguard.daemon.StopSignals;
import org.shmguard.metrics.CountingAlertSink;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground as a service: watch every shm mount with inotify and every holder's exit, reap leaked segments with their evidence, alert on capacity through journald, answer launchers on the advice socket, grow a tmpfs past critical where remount.enabled allows, and tell systemd (Type=notify) when it is ready, what it is doing, and that it is alive. Stops on SIGTERM or SIGINT.",
    footer = {"", "Exit status: 0 stopped by a signal, 70 the service failed, 75 another shmguard already answers on "
        + "advice.socket (EX_TEMPFAIL: systemd restarts the service until that one stops), 78 bad configuration "
        + "(EX_CONFIG: a value that fails validation). A metrics port that cannot listen (busy, or its address not on "
        + "this host) is not a configuration error: the daemon starts, alerts once (metrics_unavailable) and retries "
        + "it with backoff."})
final class DaemonCommand implements Callable<Integer> {
  /** How long a stop request waits for the worker: well inside the unit's TimeoutStopSec (30 s). */
  static final Duration STOP_GRACE = Duration.ofSeconds(5);
  @Mixin CommonOptions common;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    Main.setLogLevel(config.log().level());
    AlertSink journal = JournalAlertSink.choose();
    if (Boolean.getBoolean("shmguard.training")) {
      // make-cds-archive's training run (a dry run, to record the daemon's classes): its findings are no alerts.
      journal = new LogAlertSink();
    }
    // A metrics port it cannot listen on is alerted and retried, never a reason not to start.
    try (MetricsOutputs metrics = MetricsOutputs.start(config, journal)) {
      return run(config, metrics, new CountingAlertSink(journal, metrics));
    }
  }

  private int run(Config config, MetricsOutputs metrics, AlertSink sink) throws Exception {
    Daemon daemon;
    DaemonAdvice advice;
    try {
      advice = DaemonAdvice.start(config, common.hostPaths(), sink, metrics::adviceAnswered);
    } catch (SocketInUseException e) {
      common.spec.commandLine().getErr().println("shmguard: not starting: " + e.getMessage());
      return Main.EXIT_TEMPFAIL;
    }
    try (advice) {
      try {
        daemon = Daemon.start(config, common.hostPaths(), sink, ServiceNotifier.fromEnvironment(), List.of(advice::onPass,
            pass -> metrics.passCompleted(pass, pass.took())));
      } catch (java.io.IOException e) {
        common.spec.commandLine().getErr().println("shmguard: cannot start the daemon: " + e.getMessage());
        return Main.EXIT_SOFTWARE;
      }
      advice.attach(daemon);
      CountDownLatch asked = new CountDownLatch(1);
      Daemon running = daemon;
      StopSignals.onTermOrInt(() -> {
        asked.countDown();
        running.stop();
      });
      while (!daemon.awaitStopped(Duration.ofSeconds(1)) && asked.getCount() > 0) {
        // runs until a signal stops it, or the worker fails
      }
      if (daemon.awaitStopped(STOP_GRACE)) {
        daemon.close();
      } else {
        // A thread that waits on a filesystem that stopped answering cannot be woken; exiting ends it.
        common.spec.commandLine().getErr().println("shmguard: the worker did not stop within " + STOP_GRACE.toSeconds()
            + " s; exiting without it");
      }
    }
    if (daemon.failed()) {
      common.spec.commandLine().getErr().println("shmguard: the daemon stopped on an error (see the log above)");
      return Main.EXIT_SOFTWARE;
    }
    return Main.EXIT_OK;
  }

}
