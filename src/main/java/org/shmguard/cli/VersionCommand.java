package org.shmguard.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "version", description = "Print shmguard's version (the same as shmguard --version).",
    footer = {"", "Exit status: 0."})
final class VersionCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    for (String line : new Main.Version().getVersion()) {
      spec.commandLine().getOut().println(line);
    }
    return Main.EXIT_OK;
  }
}
