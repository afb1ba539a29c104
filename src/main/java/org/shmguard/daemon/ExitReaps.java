package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Output;
import org.shmguard.nativ.Poll;
import org.shmguard.policy.Judgement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's side of the exit pass ({@link Engine#exitPass}): runs it on the pass thread, tells
 * its report to the outputs at once, keeps its CPU within a {@link PassBudget} of its own (once
 * spent, an exit waits for its full pass as before), and lets a stop wait for a reap under way to
 * be told ({@link #finish}). It runs an exit pass in two places, both on the pass thread: when the
 * worker takes an {@link WorkRequest.Exit}, and in the middle of a full pass, between mounts and
 * every few processes of its /proc pass ({@link #between}), when a pidfd the worker watched fired
 * meanwhile, so that no exit waits behind a whole sweep. Either way the safety order is the
 * exit pass's: the reap first, the fd-table confirmer, the lease last; the full pass never yields
 * between its judgement and its reap.
 *
 * <pre>{@code
 * ExitReaps reaps = new ExitReaps(engine, outputs, () -> ledger.status().last());
 * engine.yieldingTo(reaps::between);
 * reaps.watching(pids, pidfds);                                // before a full pass
 * Engine.Exit e = passThread.run(() -> reaps.run(pids, now)); // an exit the worker saw
 * long took = ledger.yielded(reaps.yielded());                // after the full pass: PassLedger
 * }</pre>
 */
final class ExitReaps {
  private static final Logger LOG = LoggerFactory.getLogger(ExitReaps.class);
  /** The least time between two looks at the pidfds inside a full pass: a poll(2) of every pidfd each. */
  private static final long LOOK_EVERY_NANOS = 1_000_000L;

  private final Engine engine;
  private final Output outputs;
  /** The last full pass's judgement: what an exit pass decides from. */
  private final Supplier<Judgement> last;
  private final PassBudget budget = new PassBudget();
  /** Held while an exit pass runs and is told: a stop waits on it ({@link #finish}). */
  private final ReentrantLock reaping = new ReentrantLock();
  /** The exit passes run inside the full pass under way, for the worker once it is over. */
  private final List<Yielded> yielded = new ArrayList<>();
  /** The pids and pidfds a full pass running now looks at; null: none (no pass runs, or a stop). */
  private volatile int[][] watched;
  private volatile boolean closed;
  /** When the pass thread last looked at the pidfds (nanoTime, whose origin is arbitrary: never 0 for "never"). */
  private long lastLook = System.nanoTime() - LOOK_EVERY_NANOS;

  /**
   * What an exit pass inside a full pass did, for the worker to account for once the full pass is
   * over ({@link PassLedger#yielded}); {@code tookNanos}: its wall time, which is the exit pass's, not the full pass's.
   */
  record Yielded(int[] pids, Engine.Exit exit, long at, long tookNanos) {}

  ExitReaps(Engine engine, Output outputs, Supplier<Judgement> last) {
    this.engine = engine;
    this.outputs = outputs;
    this.last = last;
  }

  /**
   * One exit pass for {@code exited} at {@code now}, on the pass thread; its report told before it
   * returns. Null when it did not run or failed (the budget is spent, the daemon stops, an error,
   * logged): the full pass comes at once instead.
   */
  Engine.Exit run(int[] exited, long now) {
    reaping.lock();
    try {
      return closed ? null : runLocked(exited, now);
    } catch (RuntimeException e) { // inside a full pass too: that pass goes on, and judges the files itself
      LOG.error("an exit pass failed ({}); the full pass judges what the exits left", e.toString(), e);
      return null;
    } finally {
      reaping.unlock();
    }
  }

  private Engine.Exit runLocked(int[] exited, long now) {
    synchronized (budget) {
      if (budget.nextAt(now) > now) {
        return null;
      }
    }
    long cpuStarted = threadCpuNanos();
    Engine.Exit e = engine.exitPass(last.get(), exited);
    if (e.report() != null) {
      outputs.export(e.report()); // in the journal within milliseconds of the unlink
    }
    long end = System.nanoTime();
    // CPU time, not wall time: on a loaded host the wall time is mostly waiting for a CPU, which
    // costs the host nothing, and would spend the budget in the middle of a crash of many ranks.
    long spent = cpuStarted < 0 ? end - now : threadCpuNanos() - cpuStarted;
    synchronized (budget) {
      budget.spent(spent, end);
    }
    LOG.debug("exit pass: {} pids, {} reaped, {} left to the full pass", exited.length, e.reaped(), !e.complete());
    return e;
  }

  /** The pidfds of {@code pids} to look at during the full pass about to run; null pids: none from now on. */
  void watching(int[] pids, int[] pidfds) {
    watched = pids == null ? null : new int[][] {pids, pidfds};
  }

  /**
   * Called by the full pass between mounts and every few processes, on the pass thread: when one
   * of the watched pidfds fired, an exit pass for it now. Its pidfd is not looked at again in
   * this pass; the worker takes what it did from {@link #yielded} afterwards.
   */
  void between() {
    int[][] w = watched;
    long now = System.nanoTime();
    if (w == null || closed || now - lastLook < LOOK_EVERY_NANOS) {
      return;
    }
    lastLook = now;
    BitSet fired;
    try {
      fired = Poll.readyNow(w[1]);
    } catch (IOException e) {
      LOG.debug("exit pass: cannot look at the pidfds inside a pass ({}); exits wait for its end", e.getMessage());
      watched = null;
      return;
    }
    if (fired.isEmpty()) {
      return;
    }
    int[] pids = fired.stream().map(i -> w[0][i]).toArray();
    int[][] rest = {new int[w[0].length - pids.length], new int[w[0].length - pids.length]};
    for (int i = 0, k = 0; i < w[0].length; i++) {
      if (!fired.get(i)) {
        rest[0][k] = w[0][i];
        rest[1][k++] = w[1][i];
      }
    }
    watched = rest;
    Engine.Exit e = run(pids, now);
    synchronized (yielded) {
      yielded.add(new Yielded(pids, e, now, System.nanoTime() - now));
    }
  }

  /** What exit passes ran inside the last full pass (each once), and stops looking at the pidfds. */
  List<Yielded> yielded() {
    watched = null;
    synchronized (yielded) {
      List<Yielded> done = List.copyOf(yielded);
      yielded.clear();
      return done;
    }
  }

  /**
   * The daemon stops: no exit pass starts from now on, and this waits, at most {@code most}, for
   * one under way to be told to the outputs, so that no unlink goes without its event. False if it
   * did not end in time.
   */
  boolean finish(Duration most) {
    closed = true;
    watched = null;
    try {
      if (reaping.tryLock(most.toNanos(), TimeUnit.NANOSECONDS)) {
        reaping.unlock();
        return true;
      }
      LOG.warn("the exit path was still reaping when the daemon stopped; its last reap may be missing from the journal");
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** This thread's CPU time in nanoseconds, or -1 where the JVM cannot say. */
  private static long threadCpuNanos() {
    try {
      var threads = java.lang.management.ManagementFactory.getThreadMXBean();
      return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
    } catch (LinkageError noManagement) { // a trimmed runtime without java.management: wall time
      return -1;
    }
  }
}
