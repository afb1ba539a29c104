package org.shmguard.cli;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.daemon.AlertSink;
import org.shmguard.daemon.Daemon;
import org.shmguard.daemon.StopSignals;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground as a service: watch every shm mount with inotify and every holder's exit, reap leaked segments with their evidence, alert on capacity through journald, answer launchers on the advice socket, grow a tmpfs past critical where remount.enabled allows, and tell systemd (Type=notify) when it is ready, what it is doing, and that it is alive. Stops on SIGTERM or SIGINT.",
    footer = {"", "Exit status: 0 stopped by a signal, 70 the service failed, 78 bad configuration."})
final class DaemonCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    Main.setLogLevel(config.log().level());
    AlertSink sink = JournalAlertSink.choose();
    Daemon daemon;
    try (DaemonAdvice advice = DaemonAdvice.start(config, common.hostPaths(), sink)) {
      try {
        daemon = Daemon.start(config, common.hostPaths(), sink, ServiceNotifier.fromEnvironment(), List.of(advice::onPass));
      } catch (java.io.IOException e) {
        common.spec.commandLine().getErr().println("shmguard: cannot start the daemon: " + e.getMessage());
        return Main.EXIT_SOFTWARE;
      }
      advice.attach(daemon);
      StopSignals.onTermOrInt(daemon::stop);
      while (!daemon.awaitStopped(Duration.ofDays(1))) {
        // runs until a signal stops it
      }
      daemon.close();
    }
    if (daemon.failed()) {
      common.spec.commandLine().getErr().println("shmguard: the daemon stopped on an error (see the log above)");
      return Main.EXIT_SOFTWARE;
    }
    return Main.EXIT_OK;
  }
}
