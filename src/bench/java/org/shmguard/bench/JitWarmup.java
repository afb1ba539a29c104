package org.shmguard.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * The warm-up before a timed scan, apart from {@link ScanBench} so that {@link BaselineProbe} can
 * use it with another build's jar: it depends on the JDK alone.
 */
final class JitWarmup {
  /** The most passes {@link #warm} runs. */
  static final int MAX_PASSES = 400;

  private JitWarmup() {}

  /**
   * Runs {@code pass} until the JIT has finished with it: at least 30 times, then until 10 passes
   * in a row add less than 20 ms of compilation (at most {@link #MAX_PASSES}). The daemon's
   * code is compiled by its second minute, and process CPU time counts the compiler threads: 30
   * passes alone left the JIT at work through the timed rounds (about 3.3 s of its 6 s of
   * compilation done by then, measured 2026-11-24), which added several ms to each.
   *
   * @return the passes run
   */
  static int warm(Runnable pass) {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
    long before = timed ? jit.getTotalCompilationTime() : 0;
    int passes = 0;
    while (passes < MAX_PASSES) {
      pass.run();
      passes++;
      if (passes >= 30 && passes % 10 == 0) {
        if (!timed) {
          break;
        }
        long now = jit.getTotalCompilationTime();
        if (now - before < 20) {
          break;
        }
        before = now;
      }
    }
    return passes;
  }
}
