package org.shmguard.daemon;

import java.util.List;
import java.util.function.LongSupplier;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.SelfMemory;
import org.shmguard.policy.Judgement;
import org.shmguard.remedy.ReapOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How each pass's result is entered in the worker loop's state: an exit pass's reaps counted in
 * the status and the full pass it brings told to the {@link PassSchedule} (once exits are quiet, or
 * at once where it left work); the exits a full pass yielded to, accounted the same way, their
 * pidfds forgotten and their pids looked for as {@link Zombies}; and a full pass's time, what it
 * left unexamined ({@link CoverageLog}), the watches synced to it, its zombies and the status. The
 * worker thread alone writes here; the status is read from any thread. The clock comes in.
 *
 * <pre>{@code
 * ledger.exitsSeen(woken.exited(), now);                              // pidfds fired in the poll
 * ledger.exitPassEnded(passThread.run(() -> exitReaps.run(pids, now), ...), now);
 * PassReport report = passThread.run(() -> engine.pass(false, reuse), ...);
 * long yielded = ledger.yielded(exitReaps.yielded());                 // before the watches are synced
 * ledger.fullPassEnded(report, yielded);
 * }</pre>
 */
final class PassLedger {
  private static final Logger LOG = LoggerFactory.getLogger(PassLedger.class);

  private final PassSchedule schedule;
  private final Watches watches;
  private final long settleNanos;
  private final LongSupplier clock;
  private final Zombies zombies = new Zombies();
  private final CoverageLog coverage = new CoverageLog();
  private volatile DaemonStatus status = DaemonStatus.START;

  /**
   * @param settleNanos the schedule's settle ({@code daemon.settle}): a change the watches missed
   *     is an event that needs none
   * @param clock {@code System::nanoTime} in the daemon
   */
  PassLedger(PassSchedule schedule, Watches watches, long settleNanos, LongSupplier clock) {
    this.schedule = schedule;
    this.watches = watches;
    this.settleNanos = settleNanos;
    this.clock = clock;
  }

  /** What the daemon has done so far, after its latest pass; safe from any thread. */
  DaemonStatus status() {
    return status;
  }

  /** The pidfds of {@code pids} fired at {@code now}: looked for after each pass while /proc lists them. */
  void exitsSeen(int[] pids, long now) {
    for (int pid : pids) {
      zombies.exited(pid, now);
    }
  }

  /**
   * An exit pass for exits seen at {@code at} ended ({@code e}; null: it did not run, or failed):
   * its reaps counted; the full pass it brings waits for quiet, or comes at once.
   */
  void exitPassEnded(Engine.Exit e, long at) {
    if (e != null) {
      status = status.plusReaped(e.reaped());
    }
    if (e != null && e.complete()) {
      schedule.exitHandled(clock.getAsLong());
    } else {
      schedule.exitLeftWork(at); // a death needs no settling: reap what it left at once
    }
  }

  /**
   * The exit passes that ran inside the full pass that just ended: their pids no longer watched
   * and looked for as zombies, each accounted as {@link #exitPassEnded}. Call it before
   * {@link #fullPassEnded}, so that a pid whose exit was seen is watched afresh if the pass still
   * listed it. Returns the time they took, which is theirs (their own budget), not the pass's.
   */
  long yielded(List<ExitReaps.Yielded> exits) {
    long took = 0;
    for (ExitReaps.Yielded y : exits) {
      watches.exited(y.pids());
      exitsSeen(y.pids(), y.at());
      exitPassEnded(y.exit(), y.at());
      took += y.tookNanos();
    }
    return took;
  }

  /**
   * What a full pass changes in the loop: the schedule, the watches, the zombies, the status.
   * {@code yieldedNanos}, the exit passes run inside it, is not charged to the passes' budget.
   */
  void fullPassEnded(PassReport report, long yieldedNanos) {
    Judgement j = report.judgement();
    j.snapshot().warnings().forEach(w -> LOG.debug("{}", w));
    long took = report.took().toNanos();
    // more files than one pass examines, and this one made room: the next batch at once
    boolean more = report.outcomes().stream().anyMatch(o -> o.result() == ReapOutcome.Result.REAPED)
        && j.snapshot().contents().stream().anyMatch(c -> c.unexamined() > 0);
    schedule.passEnded(clock.getAsLong(), Math.max(0, took - yieldedNanos), more, report.plan().lookAgainIn());
    coverage.after(j.snapshot());
    if (watches.sync(j)) {
      schedule.event(clock.getAsLong() - settleNanos); // changed before its watch existed: look once more
    }
    long now = clock.getAsLong();
    schedule.zombies(now, zombies.afterPass(j.snapshot()::isAlive, now));
    status = status.afterPass(report, watches.overflows(), watches.mounts(), watches.holderCount(),
        SelfMemory.residentBytes());
    LOG.debug("pass {} took {} ms: {} processes, {}", status.passes(), took / 1_000_000,
        j.snapshot().processesScanned(), status.line());
  }
}
