package org.shmguard.cli;

import java.util.List;
import java.util.concurrent.Callable;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.view.Json;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "clean", mixinStandardHelpOptions = true,
    description = "Reap the segments that are leaked now: unheld by every process, old enough (reap.grace) or a 0-byte failed NCCL creation, allowed by reap.patterns and not named by reap.deny. A confirming /proc pass and an identity re-check precede every unlink.",
    footer = {"", "Exit status: 0 nothing failed, 1 something could not be reaped or nothing could be",
        "trusted (an incomplete /proc pass), 2 usage, 78 bad configuration."})
final class CleanCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Option(names = {"-n", "--dry-run"}, description = "Show what would be reaped, each file with its verdict, reason and evidence, and unlink "
      + "nothing; a leaked file reaping may not touch now is listed as blocked, with the blocker.")
  boolean dryRun;

  @Option(names = "--json", description = "Print JSON for programs instead of text.")
  boolean json;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    PassReport pass = Engine.create(config, common.hostPaths()).clean(dryRun);
    if (json) {
      common.out().println(Json.write(CleanView.of(pass)));
    } else {
      common.out().print(TextReport.clean(pass));
    }
    List<ReapOutcome> outcomes = pass.outcomes();
    boolean failed = outcomes.stream().anyMatch(o -> o.result() == ReapOutcome.Result.FAILED);
    boolean blocked = !pass.judgement().plan().blockers().isEmpty()
        && pass.judgement().segments().stream().anyMatch(a -> a.verdict().reapable());
    return failed || blocked ? 1 : 0;
  }
}
