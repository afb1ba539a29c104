package org.shmguard.cli;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.shmguard.config.Config;
import org.shmguard.daemon.SweepLoop;
import org.shmguard.engine.Engine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

@Command(name = "daemon", mixinStandardHelpOptions = true,
    description = "Run in the foreground: observe, decide and reap every daemon.interval, logging every reap with its evidence, until SIGTERM or SIGINT.",
    footer = {"", "Exit status: 0 stopped by a signal, 78 bad configuration."})
final class DaemonCommand implements Callable<Integer> {
  @Mixin CommonOptions common;

  @Override
  public Integer call() throws Exception {
    Config config = common.loadConfig();
    Main.setLogLevel(config.log().level());
    Engine engine = Engine.create(config, common.hostPaths());
    SweepLoop loop = new SweepLoop(engine, config);
    // Advice socket, advice.env and remount (issue 4): fed by every pass, closed on the way out.
    DaemonAdvice advice = DaemonAdvice.start(config, common.hostPaths(), engine);
    loop.onPass(advice::onPass);
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook = new Thread(() -> {
      loop.stop();
      try {
        stopped.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "shmguard-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      loop.run();
    } finally {
      advice.close();
      stopped.countDown();
    }
    return 0;
  }
}
