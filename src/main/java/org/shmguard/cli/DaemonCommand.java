package org.shmguard.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.config.Config;
import org.shmguard.daemon.Service;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground as a service: watch every shm mount with inotify and every holder's exit, reap leaked segments with their evidence, alert on capacity through journald, answer launchers on the advice socket, grow a tmpfs past critical where remount.enabled allows, and tell systemd (Type=notify) when it is ready, what it is doing, and that it is alive. Stops on SIGTERM or SIGINT.",
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

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    if (dryRun) {
      config = config.withDryRun();
    }
    Main.setLogLevel(config.log().level());
    PrintWriter err = common.spec.commandLine().getErr();
    Service.Ending ending;
    try (Service service = startService(config)) {
      ending = service.runUntilStopped();
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
  private Service startService(Config config) throws SocketInUseException, StartFailed {
    try {
      return Service.start(config, common.hostPaths(), ScanOutput::render);
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
