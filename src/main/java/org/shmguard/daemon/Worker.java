package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Output;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.nativ.NativeHeap;
import org.shmguard.policy.Planner;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's loop: polls inotify and the holders' pidfds until the {@link PassSchedule} says
 * something is due, takes every {@link WorkRequest} from its {@link WorkQueue} (a holder's exit
 * first), runs what is due on the {@link PassThread} (a full pass is one {@link Engine#pass}, an
 * exit pass {@link ExitReaps#run}), hands each report to every {@link Output} and pings systemd's
 * watchdog. What a request is, and what a pass's result changes, are others' jobs: the clock
 * triggers are {@link TriggerWork}'s, root's asked requests {@link AskedWork}'s, and the
 * accounting of each pass, exit or full, {@link PassLedger}'s. It waits for the pass thread in
 * short slices, so a stop is honoured at once whatever the kernel does to a pass, and a stop waits
 * for an exit pass under way to be told ({@link ExitReaps#finish}).
 *
 * <pre>{@code
 * poll -> mount events, exits -> queue -> take(): Exit | Trigger | FullPass | DryRun | Remount | Prepare | Reload
 *      -> schedule.isDue? -> pass on the pass thread -> ledger.fullPassEnded -> outputs.export(report) -> poll
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
  /** Every timing rule of this loop: when the next full pass is due. */
  private final PassSchedule schedule;
  private final PassThread passThread;
  private final WorkQueue queue;
  private final CountDownLatch done = new CountDownLatch(1);
  /** What each pass, exit or full, changes in this loop: the schedule, the watches, the zombies, the status. */
  private final PassLedger ledger;
  /** A holder's exit as an engine pass of its own, told at once; run inside a full pass too. */
  private final ExitReaps exitReaps;
  /** The sweep, the heartbeat, the rediscovery and the summary: between passes. */
  private final TriggerWork triggers;
  /** Root's dry runs, remounts and sizings, and a reload's settings: on the pass thread, told, answered. */
  private final AskedWork asked;
  /** Said after the status line while it holds (a rejected reload), "" for nothing. */
  private volatile String note = "";
  private volatile boolean stopping;
  private volatile boolean failed;
  private volatile boolean ready;

  /**
   * @param outputs told every report; systemd's status line and, in a dry run, the verdicts' log
   *     lines are added to them here
   */
  Worker(Engine engine, Rediscovery rediscovery, Watches watches, Outputs outputs, ServiceNotifier notifier,
      Duration settle, Planner planner, Duration passDeadline) {
    this.engine = engine;
    this.watches = watches;
    this.queue = new WorkQueue(watches::wake);
    this.outputs = outputs;
    this.notifier = notifier;
    this.schedule = new PassSchedule(settle.toNanos());
    this.passThread = new PassThread(passDeadline, outputs.sink(), notifier);
    this.ledger = new PassLedger(schedule, watches, settle.toNanos(), System::nanoTime);
    this.exitReaps = new ExitReaps(engine, outputs, () -> ledger.status().last());
    this.triggers = new TriggerWork(schedule, Heartbeat.system(), rediscovery, planner, outputs, ledger::status,
        passThread, () -> stopping, this::pingWatchdog);
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
    return ledger.status().line() + note;
  }

  DaemonStatus status() {
    return ledger.status();
  }

  /** How many heartbeats ran since start. */
  long heartbeats() {
    return triggers.heartbeats();
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
      LOG.info("shmguard stopping: asked to stop; {}", ledger.status().doneSoFar(engine.dryRun()));
    } catch (IOException | RuntimeException e) {
      failed = true;
      LOG.error("the worker loop failed: {}", e.toString(), e);
      LOG.error("shmguard stopping on an error; {}", ledger.status().doneSoFar(engine.dryRun()));
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
    ledger.exitsSeen(woken.exited(), now);
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
    if (r instanceof WorkRequest.Exit e) { // the exit pass, its report told on the pass thread; then the schedule told
      ledger.exitPassEnded(passThread.run(() -> exitReaps.run(e.pids(), now), () -> stopping, this::pingWatchdog), now);
    } else if (r instanceof WorkRequest.Trigger t) {
      triggers.carryOut(t, now);
    } else if (r instanceof WorkRequest.FullPass) {
      schedule.request(now); // its answer waits in the queue for the pass
    } else if (r instanceof WorkRequest.Asked<?> a && asked.carryOut(a) && a instanceof WorkRequest.Reload l) {
      triggers.rediscoverWith(l.rediscovery()); // the new settings in place: mounts looked for with them, a pass
      schedule.request(now);
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
      // the exits it yielded to, before the watches are synced: a pid seen exiting is watched afresh if still listed
      long yieldedNanos = ledger.yielded(exitReaps.yielded());
      if (report == null) {
        served.forEach(a -> a.fail(new IllegalStateException(WorkQueue.STOPPING)));
        return;
      }
      triggers.passSaw(report.judgement());
      ledger.fullPassEnded(report, yieldedNanos);
      outputs.export(report);
      served.forEach(a -> a.complete(report));
    } catch (RuntimeException e) {
      ledger.yielded(exitReaps.yielded());
      served.forEach(a -> a.fail(e));
      LOG.error("a pass failed ({}); the next trigger or sweep tries again", e.toString(), e);
    }
  }

  /** WATCHDOG=1 when due, once READY=1 was sent: from this loop, and while it waits for a pass that is on time. */
  private void pingWatchdog() {
    long now = System.nanoTime();
    if (ready && notifier.watchdogDue(now)) {
      notifier.watchdog(now);
    }
  }
}
