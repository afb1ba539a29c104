package org.shmguard.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.ProtocolException;
import org.shmguard.config.ConfigException;
import org.shmguard.config.ConfigLoader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code systemctl reload shmguard}'s ExecReload: asks the running daemon to read its configuration
 * again (RELOAD over the advice socket) and waits for the verdict, so a rejected drop-in fails the
 * reload on any systemd (Type=notify-reload, which would report it, needs systemd 253; Debian 12
 * has 252). Without an answer on the socket it sends SIGHUP to $MAINPID, as the unit did before.
 */
@Command(name = "reload", mixinStandardHelpOptions = true,
    description = {"Ask the running daemon to read its configuration again (the main file and its drop-ins) and say whether it"
        + " took it. The unit's ExecReload: systemctl reload shmguard fails when the new configuration is rejected.",
        "The daemon is reached on the advice socket (advice.socket of the configuration, /run/shmguard/advice.sock when that"
        + " cannot be read); with no daemon there, SIGHUP goes to $MAINPID (set by systemd) and the verdict is only in the journal."},
    footer = {"", "Exit status: 0 reloaded (or SIGHUP sent), 1 rejected (the daemon runs on with the configuration before it),",
        "2 usage, 3 no daemon to ask."})
final class ReloadCommand implements Callable<Integer> {
  /** A reload waits up to 60 s for a pass in progress before it applies; the answer comes after that. */
  static final Duration TIMEOUT = Duration.ofSeconds(90);

  @Mixin CommonOptions common;

  @Option(names = "--socket", paramLabel = "PATH", description = "The daemon's advice socket (default: advice.socket of the configuration).")
  Path socket;

  @Override
  public Integer call() {
    Path at = socket != null ? socket : configuredSocket();
    try {
      String applied = AdviceClient.ask(at, "RELOAD v1", TIMEOUT);
      if (System.getenv("JOURNAL_STREAM") == null) { // under systemd the daemon's config_reloaded is the journal's one line for it
        common.out().print(applied);
        common.out().flush();
      }
      return 0;
    } catch (ProtocolException e) {
      if (e.code().equals(ProtocolException.REJECTED) && System.getenv("JOURNAL_STREAM") != null) {
        // ExecReload=: this line lands in the journal right after the daemon's config_rejected, which says why: once is enough.
        common.err().println("shmguard reload: rejected; the daemon runs on with the configuration before it (config_rejected gives"
            + " the file, line and key)");
      } else {
        common.err().println("shmguard reload: " + (e.code().equals(ProtocolException.REJECTED) ? "rejected: " : e.code() + ": ")
            + e.getMessage());
      }
      return 1;
    } catch (IOException e) {
      return signal(at, e);
    }
  }

  /** The socket the configuration names; the built-in one when the configuration cannot be read (it may be the rejected one). */
  private Path configuredSocket() {
    try {
      return common.loadConfig().advice().socket();
    } catch (ConfigException e) {
      try {
        return ConfigLoader.defaults().advice().socket();
      } catch (ConfigException impossible) {
        throw new IllegalStateException(impossible);
      }
    }
  }

  private int signal(Path at, IOException why) {
    String mainPid = System.getenv("MAINPID");
    if (mainPid == null || !mainPid.matches("[1-9][0-9]*")) {
      common.err().println("shmguard reload: no daemon answers on " + at + " (" + why.getMessage() + ")");
      return 3;
    }
    boolean sent = ProcessHandle.of(Long.parseLong(mainPid)).isPresent() && hup(mainPid);
    if (!sent) {
      common.err().println("shmguard reload: no daemon answers on " + at + " and SIGHUP to " + mainPid + " failed");
      return 3;
    }
    common.err().println("shmguard reload: no daemon answers on " + at + "; sent SIGHUP to " + mainPid
        + ": whether the configuration was taken is only in the journal (config_reloaded or config_rejected)");
    return 0;
  }

  /** /bin/sh's own kill: Debian's minimal system has no /bin/kill. */
  private static boolean hup(String pid) {
    try {
      return new ProcessBuilder("/bin/sh", "-c", "kill -HUP \"$1\"", "sh", pid).inheritIO().start().waitFor() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
