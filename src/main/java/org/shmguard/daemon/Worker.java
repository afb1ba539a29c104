package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Output;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.policy.OutcomeAlerts;
import org.shmguard.host.MountDiscovery;
import org.shmguard.host.SelfMemory;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.ContainerShmSizer;
import org.shmguard.nativ.Poll;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.Planner;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's worker thread: waits on inotify, holder pidfds and requests at once, has one full
 * pass run per burst of triggers ({@link Engine#pass}: observe, judge, plan, the plan's reap and
 * remounts, one {@link PassReport}), hands the report to every {@link Output}, and pings
 * systemd's watchdog. The pass runs on the {@link PassThread}, which this thread waits for in
 * short slices, so a stop request is honoured at once whatever the kernel does to the pass.
 * Every request (the schedules', root's over the socket, a holder's exit) comes through one
 * {@link WorkQueue} as a {@link WorkRequest}; an asked one is answered with its report.
 */
final class Worker implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
  /** A holder whose pidfd fired may linger as a zombie until its parent reaps it: look again. */
  private static final long ZOMBIE_GIVE_UP_NANOS = Duration.ofSeconds(30).toNanos();
  /** How long a stop waits for an exit reap under way to be told: a reap and its event take milliseconds. */
  private static final Duration EXIT_REPORT_WAIT = Duration.ofSeconds(2);
  private static final int IDLE_WAIT_MS = 60_000;

  private final Engine engine;
  private Rediscovery rediscovery;
  private final MountWatches mounts;
  private final ExitWatches exits;
  private final Poll poll;
  /** Told every report: journald, metrics, the advice socket and file, systemd's status, ... */
  private final Outputs outputs;
  private final ServiceNotifier notifier;
  private final long settleNanos;
  /** The engine's planner, asked here only for the journal summary between passes. */
  private final Planner planner;
  /** When the next full pass is due: every timing rule of this loop (settling, the budget, the exit path's follow-up). */
  private final PassSchedule schedule;
  private final PassThread passThread;
  /** Between sweeps: a statvfs per mount that only says whether a full pass is due now. */
  private final Heartbeat heartbeat = Heartbeat.system();
  private final java.util.concurrent.atomic.AtomicLong heartbeats = new java.util.concurrent.atomic.AtomicLong();
  /** Reaps what a holder left as its pidfd fires, before the full pass its exit brings. */
  private ExitReaps exitReaps = ExitReaps.NONE;
  /** Every request to this worker: the schedules', root's, and the holders' exits its poll saw. */
  private final WorkQueue queue;
  private final CountDownLatch done = new CountDownLatch(1);
  private final Map<Integer, Long> zombies = new HashMap<>(); // pid -> first seen exited
  /** Said after the status line while it holds (a rejected reload), "" for nothing. */
  private volatile String note = "";
  private volatile boolean stopping;
  private volatile boolean failed;
  private volatile boolean ready;
  private volatile DaemonStatus status = new DaemonStatus(0, 0, 0, 0, 0, 0, null, -1);
  private Set<Dev> knownMounts = new HashSet<>();
  /** What {@link #logCoverage} last said at info, in short; null when everything was examined. */
  private String coverageLogged;

  /** Looks for the current set of mounts without a full pass. */
  interface Rediscovery {
    Set<Dev> mounts();

    /** True, once, when a container ended on a mount that is still there (see MountChanges.containerEnded). */
    default boolean containerEnded() {
      return false;
    }
  }

  /**
   * @param outputs told every report; systemd's status line and, in a dry run, the verdicts' log
   *     lines are added to them here
   */
  Worker(Engine engine, Rediscovery rediscovery, MountWatches mounts, ExitWatches exits, Poll poll, Outputs outputs,
      ServiceNotifier notifier, Duration settle, Planner planner, Duration passDeadline) {
    this.engine = engine;
    this.rediscovery = rediscovery;
    this.mounts = mounts;
    this.exits = exits;
    this.poll = poll;
    this.queue = new WorkQueue(poll::wake);
    this.outputs = outputs;
    this.notifier = notifier;
    this.settleNanos = settle.toNanos();
    this.schedule = new PassSchedule(settleNanos);
    this.planner = planner;
    this.passThread = new PassThread(passDeadline, outputs.sink(), notifier);
    outputs.add(new DryRunVerdicts()).add(new StatusOutput(notifier, this::ready, this::statusLine));
  }

  static Rediscovery rediscovery(MountDiscovery discovery, boolean auto, List<String> configured) {
    return () -> {
      Set<Dev> devs = new HashSet<>();
      discovery.discover(auto, configured).mounts().forEach(m -> devs.add(m.dev()));
      return devs;
    };
  }

  /** The exit path (set before the worker runs). */
  void exitPath(ExitReaps reaps) {
    reaps.reportTo(outputs);
    exitReaps = reaps;
  }

  /** Asks for work from any thread (the schedules, the socket); the worker does it on its own thread. */
  void offer(WorkRequest r) {
    queue.offer(r);
  }

  /** Asks for work and returns the future its answer completes (after the outputs were told its report). */
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

  void stop() {
    stopping = true;
    poll.wake();
  }

  /** Releases the watches of a worker whose loop never ran. */
  void abandon() {
    exits.close();
    mounts.close();
  }

  boolean awaitStopped(Duration d) throws InterruptedException {
    return done.await(d.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }

  /** True when the loop ended on an error rather than a stop request. */
  boolean failed() {
    return failed;
  }

  DaemonStatus status() {
    return status;
  }

  @Override
  public void run() {
    try {
      passSafely();
      if (!stopping) {
        notifier.ready(statusLine());
        ready = true;
        org.shmguard.nativ.NativeHeap.trim(); // what starting freed goes back to the kernel
      }
      while (!stopping) {
        waitAndHandle();
      }
      LOG.info("shmguard stopping: asked to stop; {}", doneSoFar());
    } catch (IOException | RuntimeException e) {
      failed = true;
      LOG.error("the worker loop failed: {}", e.toString(), e);
      LOG.error("shmguard stopping on an error; {}", doneSoFar());
    } finally {
      exitReaps.finish(EXIT_REPORT_WAIT); // a reap under way is in the journal before the stop
      passThread.close();
      queue.close();
      notifier.stopping();
      exits.close();
      mounts.close();
      LOG.info("shmguard stopped");
      done.countDown();
    }
  }

  /** "12 passes, 3 segments reaped since start": the stop line's account. */
  private String doneSoFar() {
    DaemonStatus st = status;
    return org.shmguard.text.Counts.of(st.passes(), "pass") + ", " + org.shmguard.text.Counts.of(st.reaped(), "segment")
        + " reaped since start" + (engine.dryRun() ? " (dry run: nothing unlinked)" : "");
  }

  private void waitAndHandle() throws IOException {
    int[][] holders = exits.snapshot();
    int[] fds = new int[holders[1].length + 1];
    fds[0] = mounts.fd();
    System.arraycopy(holders[1], 0, fds, 1, holders[1].length);
    BitSet ready = poll.await(fds, timeoutMs(System.nanoTime()));
    long now = System.nanoTime();
    if (ready.get(0)) {
      MountWatches.Drained d = mounts.drain();
      if (d.events() > 0) {
        schedule.mountEvents(now);
      }
    }
    int[] exited = new int[holders[0].length];
    int exitedCount = 0;
    for (int i = 0; i < holders[0].length; i++) {
      if (ready.get(i + 1)) {
        int pid = holders[0][i];
        exited[exitedCount++] = pid;
        exits.exited(pid);
        zombies.putIfAbsent(pid, now);
        LOG.debug("holder {} exited", pid);
      }
    }
    if (exitedCount > 0) {
      queue.offer(new WorkRequest.Exit(java.util.Arrays.copyOf(exited, exitedCount)));
    }
    for (WorkRequest r : queue.take(now)) {
      handle(r, now);
    }
    if (schedule.isDue(System.nanoTime())) {
      passSafely();
    }
    pingWatchdog();
  }

  /** Carries out one request; what runs on the host runs on the pass thread. */
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
    } else if (r instanceof WorkRequest.DryRun d) {
      answer(d.answer(), () -> engine.clean(true));
    } else if (r instanceof WorkRequest.Remount m) {
      answer(m.answer(), () -> told(engine.remount(m.mount(), m.sizeBytes(), m.trigger())));
    } else if (r instanceof WorkRequest.Prepare p) {
      answer(p.answer(), () -> {
        ContainerShmSizer.Outcome o = p.sizer().size(p.start());
        if (o.remount() != null) {
          outputs.export(PassReport.between(List.of(o.remount()), List.of(OutcomeAlerts.remounted(o.remount()))));
        }
        return o;
      });
    } else if (r instanceof WorkRequest.Reload l) {
      reload(l, now);
    }
  }

  /** Runs {@code work} on the pass thread and answers with what it returns (the outputs told first, by {@code work}). */
  private <T> void answer(WorkRequest.Answer<T> answer, java.util.concurrent.Callable<T> work) {
    try {
      T result = passThread.run(work, () -> stopping, this::pingWatchdog);
      if (stopping && result == null) {
        answer.fail(new IllegalStateException(WorkQueue.STOPPING));
      } else {
        answer.complete(result);
      }
    } catch (RuntimeException e) {
      answer.fail(e);
    }
  }

  /** {@code report} told to every output (on the pass thread), then returned; null stays null. */
  private PassReport told(PassReport report) {
    if (report != null) {
      outputs.export(report);
    }
    return report;
  }

  /** The exit path for {@code pids}, on the pass thread; the full pass after it when the schedule says. */
  private void exitPass(int[] pids, long now) {
    ExitReaps.Done done = exitReaps.mayRun(now) ? passThread.run(() -> exitReaps.reap(status.last(), engine.policy(),
        pids, engine.dryRun()), () -> stopping, this::pingWatchdog) : null;
    if (done != null && done.reaped() > 0) {
      DaemonStatus st = status;
      status = new DaemonStatus(st.passes(), st.reaped() + done.reaped(), st.overflows(), st.watchedMounts(),
          st.watchedHolders(), st.lastPassNanos(), st.last(), st.residentBytes());
    }
    if (done != null && done.complete()) {
      schedule.exitHandled(System.nanoTime());
    } else {
      schedule.exitLeftWork(now); // a death needs no settling: reap what it left at once
    }
  }

  /** Discovery reads every namespace's mounts: off this thread, as a pass is; a full pass if they changed. */
  private void rediscover(long now) {
    Set<Dev> found = passThread.run(rediscovery::mounts, () -> stopping, this::pingWatchdog);
    if (found != null && (!found.equals(knownMounts) || rediscovery.containerEnded())) {
      // new or gone mounts; or a pod's volume whose container ended: a full pass, with its mounts
      // found afresh, judges whether every writer of it has exited (WritersGone) before the next sweep
      schedule.request(now);
    }
  }

  /**
   * The heartbeat: a statvfs of each mount the last full pass measured, on the pass thread (a path
   * walk, as a pass's, that the kernel may hold), after any pass running there. A change beyond
   * its thresholds makes a full pass due as an event does (settled, and spaced by the pass budget
   * if passes run back to back); it never reaps, and it is not a pass: the status, the probes and
   * CHECK still count full passes only.
   */
  private void heartbeat(long now) {
    Judgement last = status.last();
    String why = passThread.run(() -> {
      String w = heartbeat.changeSince(last);
      return w == null ? "" : w;
    }, () -> stopping, this::pingWatchdog);
    heartbeats.incrementAndGet();
    if (why != null && !why.isEmpty()) {
      LOG.debug("heartbeat: {} since the last full pass; a full pass now", why);
      schedule.event(now);
    }
  }

  /** How many heartbeats ran since start. */
  long heartbeats() {
    return heartbeats.get();
  }

  /** Swaps a reload's settings in on the pass thread (after any pass running there), then asks for a full pass. */
  private void reload(WorkRequest.Reload r, long now) {
    Boolean applied = passThread.run(() -> {
      r.onPassThread().run();
      return Boolean.TRUE;
    }, () -> stopping, this::pingWatchdog);
    if (applied == null) {
      r.answer().fail(new IllegalStateException(WorkQueue.STOPPING));
      return;
    }
    rediscovery = r.rediscovery();
    schedule.request(now);
    r.answer().complete(null);
  }

  /** WATCHDOG=1 when due, once READY=1 was sent: from this loop, and while it waits for a pass that is on time. */
  private void pingWatchdog() {
    long now = System.nanoTime();
    if (ready && notifier.watchdogDue(now)) {
      notifier.watchdog(now);
    }
  }

  /** How long to wait in poll: until the schedule's next deadline or the watchdog's, at most a minute. */
  private int timeoutMs(long now) {
    long wait = schedule.waitNanos(now);
    Duration wd = notifier.watchdogPeriod();
    if (wd != null) {
      wait = Math.min(wait, wd.toNanos());
    }
    if (wait == Long.MAX_VALUE) {
      return IDLE_WAIT_MS;
    }
    return (int) Math.max(0, Math.min(IDLE_WAIT_MS, (wait + 999_999) / 1_000_000));
  }

  private void passSafely() {
    boolean rediscover = schedule.passStarts();
    try {
      pass(rediscover);
    } catch (RuntimeException e) {
      LOG.error("a pass failed ({}); the next trigger or sweep tries again", e.toString(), e);
    }
  }

  private void pass(boolean rediscover) {
    List<WorkRequest.Answer<PassReport>> served = queue.passStarts();
    PassReport report;
    try {
      boolean sameMounts = !rediscover;
      // observe, judge, plan, the plan's reap at once after the judgement, its remounts: all on the pass thread
      report = passThread.run(() -> engine.pass(false, sameMounts), () -> stopping, this::pingWatchdog);
    } catch (RuntimeException e) {
      served.forEach(f -> f.fail(e));
      throw e;
    }
    if (report == null) {
      served.forEach(f -> f.fail(new IllegalStateException(WorkQueue.STOPPING)));
      return;
    }
    Plan plan = report.plan();
    long took = report.took().toNanos();
    Judgement j = report.judgement();
    for (String w : j.snapshot().warnings()) {
      LOG.debug("{}", w);
    }
    knownMounts = j.snapshot().mounts().stream().map(ShmMount::dev).collect(Collectors.toSet());
    long reapedNow = report.outcomes().stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).count();
    long end = System.nanoTime();
    // more files than one pass examines, and this one made room: the next batch at once
    boolean more = reapedNow > 0 && j.snapshot().contents().stream().anyMatch(c -> c.unexamined() > 0);
    schedule.passEnded(end, took, more, plan.lookAgainIn());
    logCoverage(j);
    // Only mounts it may act in: a change in a mount shmguard only reports needs no pass (it is
    // not listed), and a user churning files in their own tmpfs cannot drive passes.
    if (mounts.sync(j.snapshot().mounts().stream().filter(ShmMount::mayAct).toList())) {
      schedule.event(System.nanoTime() - settleNanos); // files created before a new watch existed: look once more
    }
    if (exits.sync(heldByWatchedPids(j))) {
      schedule.event(System.nanoTime() - settleNanos);
    }
    trackZombies(j);
    DaemonStatus before = status;
    status = new DaemonStatus(before.passes() + 1, before.reaped() + reapedNow, mounts.overflows(), mounts.size(),
        exits.size(), took, j, SelfMemory.residentBytes());
    LOG.debug("pass {} took {} ms: {} processes, {}", status.passes(), took / 1_000_000, j.snapshot().processesScanned(),
        status.line());
    outputs.export(report);
    served.forEach(f -> f.complete(report));
  }

  /**
   * What the pass did not examine, at info when what is left out changes (files beyond the
   * shares, how many report-only mounts, how many namespaces beyond the limit), else at debug:
   * one line for an operator, not one per pass while a crowded mount drains.
   */
  private void logCoverage(Judgement j) {
    var snap = j.snapshot();
    long unexamined = snap.contents().stream().mapToLong(c -> c.unexamined()).sum();
    String line = snap.notExamined();
    String key = (unexamined > 0) + "/" + snap.coverage().reportOnlyMounts() + "/" + snap.coverage().namespacesLeftOut();
    if (line != null && !key.equals(coverageLogged)) {
      LOG.info("not examined in this pass: {}", line);
    } else if (line != null) {
      LOG.debug("not examined in this pass: {}", line);
    } else if (coverageLogged != null && !coverageLogged.equals(key)) {
      LOG.info("every mount found is examined again");
    }
    coverageLogged = line == null ? null : key;
  }

  /**
   * Holders of visible segments that a pattern lets shmguard reap, and the torch_shm_managers
   * waiting files wait on: the exits worth waiting for.
   */
  private static Map<Integer, ProcessInfo> heldByWatchedPids(Judgement j) {
    Map<Integer, ProcessInfo> pids = new HashMap<>();
    boolean waiting = false;
    for (Assessment a : j.segments()) {
      waiting |= a.verdict() == Verdict.WAITING;
      if (a.verdict() == Verdict.HELD) {
        for (var h : a.holders()) {
          ProcessInfo info = j.snapshot().processes().get(h.pid());
          if (info != null) {
            pids.putIfAbsent(h.pid(), info);
          }
        }
      }
    }
    if (waiting) {
      // A waiting file's job ends when its manager exits (its last client gone, or SIGKILLed with
      // them): its files are judged again at once, not at the next sweep.
      for (var m : j.snapshot().torchManagers().managers()) {
        if (m.clients() > 0 && m.startTicks() >= 0) {
          pids.putIfAbsent(m.hostPid(), new ProcessInfo(m.hostPid(), "torch_shm_manag", m.uid(), null, null, m.startTicks()));
        }
      }
    }
    return pids;
  }

  /** Exited holders still listed in /proc (zombies) get another pass soon, with backoff (the schedule's). */
  private void trackZombies(Judgement j) {
    long now = System.nanoTime();
    zombies.entrySet().removeIf(e -> !j.snapshot().isAlive(e.getKey()) || now - e.getValue() > ZOMBIE_GIVE_UP_NANOS);
    schedule.zombies(now, !zombies.isEmpty());
  }

  private void summary() {
    Judgement j = status.last();
    if (j == null) {
      return;
    }
    outputs.export(PassReport.between(List.of(), planner.summary(j, status.reaped())));
  }
}
