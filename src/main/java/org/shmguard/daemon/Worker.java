package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Output;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.host.SelfMemory;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.NativeHeap;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Planner;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's loop: polls inotify and the holders' pidfds until the {@link PassSchedule} says
 * something is due, takes every {@link WorkRequest} from its {@link WorkQueue} (a holder's exit
 * first), runs what is due on the {@link PassThread} (a full pass is one {@link Engine#pass}), hands
 * each report to every {@link Output} and pings systemd's watchdog. It waits for the pass thread in
 * short slices, so a stop is honoured at once whatever the kernel does to a pass.
 *
 * <pre>{@code
 * poll -> mount events, exits -> queue -> take(): Exit | Trigger | FullPass | DryRun | Remount | Prepare | Reload
 *      -> schedule.isDue? -> pass on the pass thread -> outputs.export(report) -> afterPass -> poll
 * }</pre>
 */
final class Worker implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
  /** How long a stop waits for an exit pass under way to be told: a reap and its event take milliseconds. */
  private static final Duration EXIT_REPORT_WAIT = Duration.ofSeconds(2);

  private final Engine engine;
  /** inotify on the mounts, pidfds on the holders, and the wake for requests: one poll. */
  private final Watches watches;
  /** Told every report: journald, metrics, the advice socket and file, systemd's status, ... */
  private final Outputs outputs;
  private final ServiceNotifier notifier;
  private final long settleNanos;
  /** The engine's planner, asked here only for the journal summary between passes. */
  private final Planner planner;
  /** Every timing rule of this loop: when the next full pass is due. */
  private final PassSchedule schedule;
  private final PassThread passThread;
  private final WorkQueue queue;
  private final Heartbeat heartbeat = Heartbeat.system();
  private final Zombies zombies = new Zombies();
  private final CoverageLog coverage = new CoverageLog();
  private final CountDownLatch done = new CountDownLatch(1);
  private Rediscovery rediscovery;
  /** A holder's exit as an engine pass of its own, told at once; run inside a full pass too. */
  private final ExitReaps exitReaps;
  /** Root's dry runs, remounts and sizings, and a reload's settings: on the pass thread, told, answered. */
  private final AskedWork asked;
  private Set<Dev> knownMounts = new HashSet<>();
  /** Said after the status line while it holds (a rejected reload), "" for nothing. */
  private volatile String note = "";
  private volatile boolean stopping;
  private volatile boolean failed;
  private volatile boolean ready;
  private volatile DaemonStatus status = DaemonStatus.START;

  /**
   * @param outputs told every report; systemd's status line and, in a dry run, the verdicts' log
   *     lines are added to them here
   */
  Worker(Engine engine, Rediscovery rediscovery, Watches watches, Outputs outputs, ServiceNotifier notifier,
      Duration settle, Planner planner, Duration passDeadline) {
    this.engine = engine;
    this.rediscovery = rediscovery;
    this.watches = watches;
    this.queue = new WorkQueue(watches::wake);
    this.outputs = outputs;
    this.notifier = notifier;
    this.settleNanos = settle.toNanos();
    this.schedule = new PassSchedule(settleNanos);
    this.planner = planner;
    this.passThread = new PassThread(passDeadline, outputs.sink(), notifier);
    this.exitReaps = new ExitReaps(engine, outputs, () -> status.last());
    this.asked = new AskedWork(engine, outputs, passThread, () -> stopping, this::pingWatchdog);
    engine.yieldingTo(exitReaps::between); // a full pass yields to an exit between mounts and processes
    outputs.add(new DryRunVerdicts()).add(new StatusOutput(notifier, this::ready, this::statusLine));
  }

  /** Asks for work from any thread (the schedules, the socket); the worker does it on its own thread. */
  void offer(WorkRequest r) {
    queue.offer(r);
  }

  /** Asks for work; the future completes with its answer, after the outputs were told its report. */
  <T> CompletableFuture<T> ask(WorkRequest.Asked<T> r) {
    return queue.ask(r);
  }

  /** Said after the status line (STATUS=) until replaced; "" for nothing. */
  void note(String text) {
    note = text == null ? "" : text;
  }

  /** Whether READY=1 was sent (after the first full pass). */
  boolean ready() {
    return ready;
  }

  /** The one-line status, with the note if there is one. */
  String statusLine() {
    return status.line() + note;
  }

  DaemonStatus status() {
    return status;
  }

  /** How many heartbeats ran since start. */
  long heartbeats() {
    return heartbeat.beats();
  }

  void stop() {
    stopping = true;
    watches.wake();
  }

  /** Releases the watches of a worker whose loop never ran. */
  void abandon() {
    watches.close();
  }

  boolean awaitStopped(Duration d) throws InterruptedException {
    return done.await(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** True when the loop ended on an error rather than a stop request. */
  boolean failed() {
    return failed;
  }

  @Override
  public void run() {
    try {
      passSafely();
      if (!stopping) {
        notifier.ready(statusLine());
        ready = true;
        NativeHeap.trim(); // what starting freed goes back to the kernel
      }
      while (!stopping) {
        waitAndHandle();
      }
      LOG.info("shmguard stopping: asked to stop; {}", status.doneSoFar(engine.dryRun()));
    } catch (IOException | RuntimeException e) {
      failed = true;
      LOG.error("the worker loop failed: {}", e.toString(), e);
      LOG.error("shmguard stopping on an error; {}", status.doneSoFar(engine.dryRun()));
    } finally {
      exitReaps.finish(EXIT_REPORT_WAIT); // a reap under way is in the journal before the stop
      passThread.close();
      queue.close();
      notifier.stopping();
      watches.close();
      LOG.info("shmguard stopped");
      done.countDown();
    }
  }

  /** One turn of the loop: wait until something happens or is due, take the requests, run what is due. */
  private void waitAndHandle() throws IOException {
    Watches.Woken woken = watches.await(Watches.timeoutMs(schedule.waitNanos(System.nanoTime()), notifier.watchdogPeriod()));
    long now = System.nanoTime();
    if (woken.mountEvents()) {
      schedule.mountEvents(now);
    }
    for (int pid : woken.exited()) {
      zombies.exited(pid, now);
    }
    if (woken.exited().length > 0) {
      queue.offer(new WorkRequest.Exit(woken.exited()));
    }
    for (WorkRequest r : queue.take(now)) {
      handle(r, now);
    }
    if (schedule.isDue(System.nanoTime())) {
      passSafely();
    }
    pingWatchdog();
  }

  /** Carries out one request; what reads or changes the host runs on the pass thread. */
  private void handle(WorkRequest r, long now) {
    if (r instanceof WorkRequest.Exit e) {
      exitPass(e.pids(), now);
    } else if (r instanceof WorkRequest.Trigger t) {
      switch (t) {
        case SWEEP -> schedule.request(now);
        case HEARTBEAT -> heartbeat(now);
        case REDISCOVER -> rediscover(now);
        case SUMMARY -> summary();
      }
    } else if (r instanceof WorkRequest.FullPass) {
      schedule.request(now); // its answer waits in the queue for the pass
    } else if (r instanceof WorkRequest.Asked<?> a && asked.carryOut(a) && a instanceof WorkRequest.Reload l) {
      rediscovery = l.rediscovery(); // the new settings are in place: mounts looked for with them, and a pass
      schedule.request(now);
    }
  }

  /** The exit pass for {@code pids} on the pass thread (its report told there), then the schedule told. */
  private void exitPass(int[] pids, long now) {
    exited(passThread.run(() -> exitReaps.run(pids, now), () -> stopping, this::pingWatchdog), now);
  }

  /** An exit pass ended ({@code e}; null: it did not run): the full pass it brings waits for quiet, or comes at once. */
  private void exited(Engine.Exit e, long at) {
    if (e != null) {
      status = status.plusReaped(e.reaped());
    }
    if (e != null && e.complete()) {
      schedule.exitHandled(System.nanoTime());
    } else {
      schedule.exitLeftWork(at); // a death needs no settling: reap what it left at once
    }
  }

  /**
   * The exit passes that ran inside the full pass that just ended: their pids forgotten, each
   * accounted as above. Returns the time they took, which is theirs (their own budget), not the pass's.
   */
  private long yieldedExits() {
    long took = 0;
    for (ExitReaps.Yielded y : exitReaps.yielded()) {
      watches.exited(y.pids());
      for (int pid : y.pids()) {
        zombies.exited(pid, y.at());
      }
      exited(y.exit(), y.at());
      took += y.tookNanos();
    }
    return took;
  }

  /**
   * The heartbeat: a statvfs of each mount the last full pass measured, on the pass thread. A
   * change beyond its thresholds makes a full pass due as an event does; it never reaps, and it is
   * not a pass: the status, the probes and CHECK count full passes only.
   */
  private void heartbeat(long now) {
    Judgement last = status.last();
    String why = passThread.run(() -> {
      String w = heartbeat.changeSince(last);
      return w == null ? "" : w;
    }, () -> stopping, this::pingWatchdog);
    if (why != null && !why.isEmpty()) {
      LOG.debug("heartbeat: {} since the last full pass; a full pass now", why);
      schedule.event(now);
    }
  }

  /** Discovery reads every namespace's mounts, on the pass thread; a full pass if they changed. */
  private void rediscover(long now) {
    Set<Dev> found = passThread.run(rediscovery::mounts, () -> stopping, this::pingWatchdog);
    if (found != null && (!found.equals(knownMounts) || rediscovery.containerEnded())) {
      // new or gone mounts, or a pod's volume whose container ended: a full pass with its mounts
      // found afresh judges whether every writer of it has exited (WritersGone) before the next sweep
      schedule.request(now);
    }
  }

  private void summary() {
    Judgement j = status.last();
    if (j != null) {
      outputs.export(PassReport.between(List.of(), planner.summary(j, status.reaped())));
    }
  }

  private void passSafely() {
    boolean rediscover = schedule.passStarts();
    List<WorkRequest.Answer<PassReport>> served = queue.passStarts();
    int[][] holders = watches.holders();
    exitReaps.watching(holders[0], holders[1]);
    try {
      // observe, judge, plan, the plan's reap at once after the judgement, its remounts: all on the pass thread
      PassReport report = passThread.run(() -> engine.pass(false, !rediscover), () -> stopping, this::pingWatchdog);
      // before the watches are synced: a pid whose exit was seen is watched afresh if still listed
      long yieldedNanos = yieldedExits();
      if (report == null) {
        served.forEach(a -> a.fail(new IllegalStateException(WorkQueue.STOPPING)));
        return;
      }
      afterPass(report, yieldedNanos);
      outputs.export(report);
      served.forEach(a -> a.complete(report));
    } catch (RuntimeException e) {
      yieldedExits();
      served.forEach(a -> a.fail(e));
      LOG.error("a pass failed ({}); the next trigger or sweep tries again", e.toString(), e);
    }
  }

  /**
   * What a full pass changes in this loop: the schedule, the watches, the zombies, the status.
   * {@code yieldedNanos}, the exit passes run inside it, is not charged to the passes' budget.
   */
  private void afterPass(PassReport report, long yieldedNanos) {
    Judgement j = report.judgement();
    j.snapshot().warnings().forEach(w -> LOG.debug("{}", w));
    knownMounts = j.snapshot().mounts().stream().map(ShmMount::dev).collect(Collectors.toSet());
    long took = report.took().toNanos();
    // more files than one pass examines, and this one made room: the next batch at once
    boolean more = report.outcomes().stream().anyMatch(o -> o.result() == ReapOutcome.Result.REAPED)
        && j.snapshot().contents().stream().anyMatch(c -> c.unexamined() > 0);
    schedule.passEnded(System.nanoTime(), Math.max(0, took - yieldedNanos), more, report.plan().lookAgainIn());
    coverage.after(j.snapshot());
    if (watches.sync(j)) {
      schedule.event(System.nanoTime() - settleNanos); // changed before its watch existed: look once more
    }
    long now = System.nanoTime();
    schedule.zombies(now, zombies.afterPass(j.snapshot()::isAlive, now));
    status = status.afterPass(report, watches.overflows(), watches.mounts(), watches.holderCount(),
        SelfMemory.residentBytes());
    LOG.debug("pass {} took {} ms: {} processes, {}", status.passes(), took / 1_000_000, j.snapshot().processesScanned(),
        status.line());
  }

  /** WATCHDOG=1 when due, once READY=1 was sent: from this loop, and while it waits for a pass that is on time. */
  private void pingWatchdog() {
    long now = System.nanoTime();
    if (ready && notifier.watchdogDue(now)) {
      notifier.watchdog(now);
    }
  }
}
