package org.shmguard.cli;

import java.nio.file.Path;
import org.shmguard.config.Config;
import org.shmguard.config.ConfigException;
import org.shmguard.config.ConfigLoader;
import org.shmguard.host.HostPaths;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Options every command takes. */
final class CommonOptions {
  @Option(names = {"-c", "--config"}, paramLabel = "FILE",
      description = "Configuration file (default: /etc/shmguard/shmguard.yaml if it exists, else the built-in defaults), "
          + "with the drop-ins FILE.d/*.yaml merged over it in name order (default: /etc/shmguard/shmguard.yaml.d/).")
  Path config;

  @Option(names = "--host-root", paramLabel = "DIR", defaultValue = "/",
      description = "Where the host's root (and its /proc) is mounted, when shmguard runs in a container (default: ${DEFAULT-VALUE}).")
  String hostRoot;

  @CommandLine.Spec(CommandLine.Spec.Target.MIXEE) CommandLine.Model.CommandSpec spec;

  /** Where the command's results go (standard output, or what a caller of Main.run chose). */
  java.io.PrintWriter out() {
    return spec.commandLine().getOut();
  }

  /** Where the command's errors go. */
  java.io.PrintWriter err() {
    return spec.commandLine().getErr();
  }

  Config loadConfig() throws ConfigException {
    return ConfigLoader.resolve(config);
  }

  HostPaths hostPaths() {
    return HostPaths.of(hostRoot);
  }
}
