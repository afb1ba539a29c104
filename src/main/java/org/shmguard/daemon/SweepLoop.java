package org.shmguard.daemon;

import java.time.Duration;
import java.util.function.Consumer;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.policy.Durations;
import org.shmguard.remedy.ReapOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's simplest form: a full observe, decide, reap pass every {@code daemon.interval},
 * each reap logged with its evidence. Runs until {@link #stop()}.
 */
public final class SweepLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(SweepLoop.class);
  private final Engine engine;
  private final Duration interval;
  private final Object lock = new Object();
  private volatile boolean running = true;
  private volatile Consumer<Engine.Pass> passListener = pass -> {};

  public SweepLoop(Engine engine, Config config) {
    this.engine = engine;
    this.interval = config.daemon().interval();
    LOG.info("shmguard starting with {}: interval {}, grace {}, patterns {}, deny {}{}", config.source(),
        Durations.human(interval), Durations.human(config.reap().grace()), config.reap().patterns(), config.reap().deny(),
        config.reap().dryRun() ? ", dry run" : "");
  }

  @Override
  public void run() {
    while (running) {
      long start = System.nanoTime();
      try {
        sweep();
      } catch (RuntimeException e) {
        LOG.error("pass failed; trying again in {}", Durations.human(interval), e);
      }
      long waitMs = Math.max(0, interval.toMillis() - (System.nanoTime() - start) / 1_000_000);
      synchronized (lock) {
        if (running && waitMs > 0) {
          try {
            lock.wait(waitMs);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
          }
        }
      }
    }
    LOG.info("shmguard stopped");
  }

  /** Called with every pass's result, on the loop's thread (the advice service listens here). */
  public void onPass(Consumer<Engine.Pass> listener) {
    this.passListener = listener;
  }

  void sweep() {
    Engine.Pass pass = engine.clean(false);
    passListener.accept(pass);
    var j = pass.judgement();
    for (String b : j.plan().blockers()) {
      LOG.warn("not reaping: {}", b);
    }
    for (String w : j.snapshot().warnings()) {
      LOG.warn("{}", w);
    }
    for (ReapOutcome o : pass.outcomes()) {
      var a = o.candidate();
      String what = a.mount().displayName() + "/" + a.segment().displayName();
      switch (o.result()) {
        case REAPED, WOULD_REAP -> LOG.info("{} {} ({} bytes, {}, age {}): {}", o.result().label(), what,
            a.segment().allocatedBytes(), a.kind(), Durations.human(a.age()), o.detail());
        case SKIPPED -> LOG.info("skipped {}: {}", what, o.detail());
        case FAILED -> LOG.warn("failed to reap {}: {}", what, o.detail());
      }
    }
    LOG.debug("pass: {} mounts, {} files, {} processes", j.mounts().size(), j.segments().size(),
        j.snapshot().processesScanned());
  }

  public void stop() {
    running = false;
    synchronized (lock) {
      lock.notifyAll();
    }
  }
}
