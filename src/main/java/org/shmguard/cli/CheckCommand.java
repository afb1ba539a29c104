package org.shmguard.cli;

import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigException;
import org.shmguard.engine.Engine;
import org.shmguard.policy.Health;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * One health verdict with one line of output, in node-problem-detector's custom plugin protocol.
 * Never reaps: a health probe must not change the host. While the daemon runs, its verdict on its
 * last pass (the socket's CHECK) is the answer; without one, this command makes a pass of its own.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
    description = {"Say in one line whether the watched shm mounts are healthy, as a node-problem-detector "
        + "custom plugin or a monitoring check. Changes nothing on the host.",
        "A problem is a mount at least capacity.critical percent full, leaked segments shmguard may not reap "
        + "(reaping blocked or reap.dryRun), or a /proc pass that could not read every process.",
        "While the daemon runs, the verdict is on its last pass (unknown when that pass is stale); otherwise, or with"
        + " --local, --config or --host-root, this command scans here."},
    footer = {"", "Exit status: 0 healthy, 1 a problem, 2 unknown (including a bad configuration)."})
final class CheckCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--local", description = "Scan here, in this process, even when the daemon runs.")
  boolean local;

  @Override
  public Integer call() {
    Health health;
    try {
      Config config = common.loadConfig();
      DaemonAnswer answer = DaemonAnswer.ask(common, config, local, "CHECK v1", false);
      if (answer.answered() && answer.body().contains("\nSHMGUARD_PASS_AGE_SECONDS=")) { // else no pass yet: make one here
        return printDaemons(answer.body());
      }
      health = Health.of(Engine.create(config, common.hostPaths()).judge(), config.capacity().critical(),
          config.reap().dryRun());
    } catch (ConfigException e) {
      health = Health.unknown("bad configuration: " + e.format());
    } catch (RuntimeException e) {
      health = Health.unknown(String.valueOf(e.getMessage() == null ? e : e.getMessage()));
    }
    common.out().println(health.line());
    return health.status().exitCode();
  }

  /** The daemon's SHMGUARD_LINE, with the exit status of its SHMGUARD_HEALTH. */
  private int printDaemons(String body) {
    String line = "unknown: the daemon's answer has no verdict";
    int status = Health.Status.UNKNOWN.exitCode();
    for (String l : body.split("\n")) {
      if (l.startsWith("SHMGUARD_LINE=")) {
        line = l.substring("SHMGUARD_LINE=".length());
      } else if (l.startsWith("SHMGUARD_HEALTH=")) {
        String h = l.substring("SHMGUARD_HEALTH=".length());
        status = h.equals("ok") ? Health.Status.OK.exitCode() : h.equals("problem") ? Health.Status.PROBLEM.exitCode()
            : Health.Status.UNKNOWN.exitCode();
      }
    }
    common.out().println(line);
    return status;
  }
}
