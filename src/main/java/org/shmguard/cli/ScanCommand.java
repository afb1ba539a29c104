package org.shmguard.cli;

import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.policy.Judgement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "scan", mixinStandardHelpOptions = true,
    description = "Show every watched shm mount with its file counts, and each file a reap pattern allows (the oldest reap.examineLimit per mount): size, age, NCCL kind, holders and verdict. Changes nothing on the host.",
    footer = {"", "Verdicts: held, grace (unheld but recent), leaked, failed-creation (0-byte NCCL file), ignored.",
        "Exit status: 0 done, 2 usage, 78 bad configuration."})
final class ScanCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = "--json", description = "Print JSON for programs instead of tables.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    Judgement j = Engine.create(config, common.hostPaths()).judge();
    if (json) {
      common.out().println(Output.json(ScanView.of(j)));
    } else {
      common.out().print(TextReport.scan(j));
    }
    return 0;
  }
}
