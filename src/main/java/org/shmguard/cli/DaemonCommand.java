package org.shmguard.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.shmguard.config.Config;
import org.shmguard.daemon.AlertSink;
import org.shmguard.daemon.Daemon;
import org.shmguard.daemon.StopSignals;
import org.shmguard.metrics.CountingAlertSink;
import org.shmguard.metrics.MetricsOutputs;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground as a service: watch every shm mount with inotify and every holder's exit, reap leaked segments with their evidence, alert on capacity through journald, answer launchers on the advice socket, grow a tmpfs past critical where remount.enabled allows, and tell systemd (Type=notify) when it is ready, what it is doing, and that it is alive. Stops on SIGTERM or SIGINT.",
    footer = {"", "Exit status: 0 stopped by a signal, 70 the service failed, 78 bad configuration."})
final class DaemonCommand implements Callable<Integer> {
  /** How long a stop request waits for the worker: well inside the unit's TimeoutStopSec (30 s). */
  static final Duration STOP_GRACE = Duration.ofSeconds(5);
  @Mixin CommonOptions common;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    Main.setLogLevel(config.log().level());
    try (MetricsOutputs metrics = MetricsOutputs.start(config)) {
      return run(config, metrics);
    }
  }

  private int run(Config config, MetricsOutputs metrics) throws Exception {
    AlertSink sink = new CountingAlertSink(JournalAlertSink.choose(), metrics);
    Daemon daemon;
    try (DaemonAdvice advice = DaemonAdvice.start(config, common.hostPaths(), sink, metrics::adviceAnswered)) {
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
