package org.shmguard.cli;

import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigException;
import org.shmguard.engine.Engine;
import org.shmguard.policy.Health;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * One health verdict with one line of output, in node-problem-detector's custom plugin protocol.
 * Never reaps: a health probe must not change the host.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
    description = {"Say in one line whether the watched shm mounts are healthy, as a node-problem-detector "
        + "custom plugin or a monitoring check. Changes nothing on the host.",
        "A problem is a mount at least capacity.critical percent full, leaked segments shmguard may not reap "
        + "(reaping blocked or reap.dryRun), or a /proc pass that could not read every process."},
    footer = {"", "Exit status: 0 healthy, 1 a problem, 2 unknown (including a bad configuration)."})
final class CheckCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Override
  public Integer call() {
    Health health;
    try {
      Config config = common.loadConfig();
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
}
