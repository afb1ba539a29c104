package org.shmguard.cli;

import java.util.concurrent.Callable;
import org.shmguard.advice.ScanAnswer;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.policy.Judgement;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import org.shmguard.view.ScanSource;
import org.shmguard.view.ScanOutput;

@Command(name = "scan", mixinStandardHelpOptions = true,
    description = {"Show every watched shm mount with its file counts, and each file a reap pattern allows (the oldest reap.examineLimit per mount): size, age, NCCL kind, holders and verdict. Changes nothing on the host.",
        "Run by root while the daemon runs, it shows the daemon's last pass (its verdicts know which holders exited); otherwise,"
            + " or with --local, --config or --host-root, it scans here."},
    footer = {"", "Verdicts: held, grace (unheld but recent), waiting (its live job may still receive it), leaked,",
        "failed-creation (0-byte NCCL file), ignored.",
        "Exit status: 0 done, 1 --daemon-only and no daemon answered, 2 usage, 78 bad configuration."})
final class ScanCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--json", description = "Print JSON for programs instead of tables.")
  boolean json;

  @Option(names = "--local", description = "Scan here, in this process, even when the daemon runs.")
  boolean local;

  @Option(names = "--daemon-only", description = "Show the daemon's last pass or nothing: exit 1 when it does not answer.")
  boolean daemonOnly;

  @Override
  public Integer call() throws Exception {
    if (local && daemonOnly) {
      throw new CommandLine.ParameterException(common.spec.commandLine(), "--local and --daemon-only exclude each other");
    }
    Config config = common.loadConfig();
    DaemonAnswer answer = DaemonAnswer.ask(common, config, local,
        "SCAN v1 format=" + (json ? "json" : "text"), true);
    if (answer.answered()) {
      common.out().print(answer.body());
      common.out().flush();
      return Main.EXIT_OK;
    }
    if (daemonOnly) {
      common.spec.commandLine().getErr().println("shmguard: no scan from the daemon: " + answer.whyNot());
      return Main.EXIT_PROBLEM;
    }
    Judgement j = Engine.create(config, common.hostPaths()).judge();
    common.out().print(ScanOutput.render(j, ScanSource.local(answer.whyNot()), json));
    return Main.EXIT_OK;
  }
}
