package org.shmguard.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.config.Config;
import org.shmguard.daemon.Service;
import org.shmguard.daemon.ServiceSignals;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground as a service: watch every shm mount with inotify and every holder's exit, reap leaked segments with their evidence, alert on capacity through journald, answer launchers on the advice socket, grow a tmpfs past critical where remount.enabled allows, and tell systemd (Type=notify) when it is ready, what it is doing, and that it is alive. Stops on SIGTERM or SIGINT; on SIGHUP (systemctl reload) reads the configuration and its drop-ins again and applies what a running daemon can change, or keeps the running one and says why.",
    footer = {"", "Exit status: 0 stopped by a signal, 70 the service failed, 75 another shmguard already answers on "
        + "advice.socket (EX_TEMPFAIL: systemd restarts the service until that one stops), 78 bad configuration "
        + "(EX_CONFIG: a value that fails validation). A metrics port that cannot listen (busy, or its address not on "
        + "this host) is not a configuration error: the daemon starts, alerts once (metrics_unavailable) and retries "
        + "it with backoff."})
final class DaemonCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = {"-n", "--dry-run"}, description = "Change nothing on the host: watch, judge and report as the service "
      + "does, log every segment it would reap (\"dry run: would reap ...\", with its verdict, reason and any blocker) and "
      + "every remount it would make, and unlink, rename or remount nothing. The same as reap.dryRun: true.")
  boolean dryRun;

  @Option(names = "--state-dir", paramLabel = "DIR", description = "Where the holder history survives a restart or an "
      + "upgrade (holders.json). Default: systemd's $STATE_DIRECTORY (the unit's StateDirectory=shmguard: /var/lib/shmguard); "
      + "without either, none is kept and a restart waits out the grace for files it saw held.")
  Path stateDir;

  @Override
  public Integer call() throws Exception {
    Service.ConfigSource source = () -> dryRun ? common.loadConfig().withDryRun() : common.loadConfig();
    Config config = source.load();
    Main.setLogLevel(config.log().level());
    PrintWriter err = common.spec.commandLine().getErr();
    Service.Ending ending;
    // From here on a SIGTERM or SIGHUP waits for the service instead of ending the JVM mid-start.
    ServiceSignals signals = ServiceSignals.catchNow();
    try (Service service = startService(config, new Service.Options(stateDirectory(), source, Main::setLogLevel))) {
      ending = service.runUntilStopped(signals);
      if (ending.stuck()) {
        // A thread that waits on a filesystem that stopped answering cannot be woken; exiting ends it.
        err.println("shmguard: the worker did not stop within " + Service.STOP_GRACE.toSeconds()
            + " s; exiting without it");
      }
    } catch (SocketInUseException e) {
      err.println("shmguard: not starting: " + e.getMessage());
      return Main.EXIT_TEMPFAIL;
    } catch (StartFailed e) {
      err.println("shmguard: cannot start the daemon: " + e.getCause().getMessage());
      return Main.EXIT_SOFTWARE;
    }
    if (ending.failed()) {
      err.println("shmguard: the daemon stopped on an error (see the log above)");
      return Main.EXIT_SOFTWARE;
    }
    return Main.EXIT_OK;
  }

  /** Start-up failures apart from those of closing: only the first are "cannot start". */
  /** --state-dir, else the first of systemd's $STATE_DIRECTORY, else none. */
  private Path stateDirectory() {
    if (stateDir != null) {
      return stateDir;
    }
    String fromSystemd = System.getenv("STATE_DIRECTORY");
    return fromSystemd == null || fromSystemd.isBlank() ? null : Path.of(fromSystemd.split(":")[0]);
  }

  private Service startService(Config config, Service.Options options) throws SocketInUseException, StartFailed {
    try {
      return Service.start(config, common.hostPaths(), options);
    } catch (SocketInUseException e) {
      throw e;
    } catch (IOException e) {
      throw new StartFailed(e);
    }
  }

  private static final class StartFailed extends Exception {
    StartFailed(IOException cause) {
      super(cause);
    }
  }
}
