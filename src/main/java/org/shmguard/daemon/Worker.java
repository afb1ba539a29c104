package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.engine.Engine;
import org.shmguard.host.MountDiscovery;
import org.shmguard.host.SelfMemory;
import org.shmguard.host.PathWalks;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Poll;
import org.shmguard.policy.Action;
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
 * pass (observe, judge, plan, and the plan's reap) run per burst of triggers, carries out the
 * rest of the plan and the planner's report of the reap's outcomes, and pings systemd's
 * watchdog. The pass runs on the {@link PassThread}, which this thread waits for in short slices,
 * so a stop request is honoured at once whatever the kernel does to the pass.
 */
final class Worker implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
  /** A holder whose pidfd fired may linger as a zombie until its parent reaps it: look again. */
  private static final long ZOMBIE_RETRY_START_NANOS = Duration.ofMillis(20).toNanos();
  private static final long ZOMBIE_RETRY_MAX_NANOS = Duration.ofSeconds(1).toNanos();
  private static final long ZOMBIE_GIVE_UP_NANOS = Duration.ofSeconds(30).toNanos();
  private static final int IDLE_WAIT_MS = 60_000;
  /** The soonest a pass runs again for a segment leaving its grace: a bound on passes, whatever the clocks say. */
  private static final long GRACE_MIN_WAIT_NANOS = Duration.ofMillis(50).toNanos();

  enum Request { SWEEP, REDISCOVER, SUMMARY, RECONFIGURE }

  private final Engine engine;
  private Rediscovery rediscovery;
  private final MountWatches mounts;
  private final ExitWatches exits;
  private final Poll poll;
  private final AlertSink sink;
  private final ServiceNotifier notifier;
  private final long settleNanos;
  /** The decide stage after a judgement: what to reap, raise, advise and remount, and when a grace ends. */
  private final Planner planner;
  /** In a dry run, each file's verdict in the log when it changes. */
  private final DryRunVerdicts dryRunLog = new DryRunVerdicts();
  /** The act stage for the planner's actions: the reap on the pass thread, the rest on this one. */
  private final Actor actor;
  /**
   * Spaces the passes that inotify, a holder's exit or a segment leaving its grace ask for, once
   * two seconds of them have run back to back (see PassBudget). Requests, sweeps and zombie retries do
   * not wait.
   */
  private final PassBudget budget = new PassBudget();
  private final PassThread passThread;
  private final Set<Request> requests = EnumSet.noneOf(Request.class);
  private final CountDownLatch done = new CountDownLatch(1);
  private final Map<Integer, Long> zombies = new HashMap<>(); // pid -> first seen exited
  private final List<Consumer<Engine.Pass>> listeners = new CopyOnWriteArrayList<>();
  private final List<CompletableFuture<Engine.Pass>> waiters = new ArrayList<>();
  /** A reloaded configuration's settings, waiting for the worker to apply them between passes. */
  private Reconfiguration reconfiguration;
  /** Said after the status line while it holds (a rejected reload), "" for nothing. */
  private volatile String note = "";
  private volatile boolean stopping;
  private volatile boolean failed;
  private volatile boolean ready;
  private volatile DaemonStatus status = new DaemonStatus(0, 0, 0, 0, 0, 0, null, -1);
  private long pendingSince = -1;
  private long retryAt = -1;
  /** Whether anything but a holder's exit asked for a pass since the last one: then mounts are discovered again. */
  private boolean rediscover = true;
  private long retryGap = ZOMBIE_RETRY_START_NANOS;
  /** When the first unheld segment now in its grace becomes reapable: a pass is due then, not at the next sweep. */
  private long graceEndsAt = -1;
  private Set<Dev> knownMounts = new HashSet<>();
  /** What {@link #logCoverage} last said at info, in short; null when everything was examined. */
  private String coverageLogged;
  /** The soonest an event-triggered pass may run (PassBudget). */
  private long eventsNotBefore = -1;
  /** Whether a request (sweep, rediscovery) is among what made the pending pass due: it does not wait for the gap. */
  private boolean requested;

  /** Looks for the current set of mounts without a full pass. */
  interface Rediscovery {
    Set<Dev> mounts();
  }

  Worker(Engine engine, Rediscovery rediscovery, MountWatches mounts, ExitWatches exits, Poll poll, AlertSink sink,
      ServiceNotifier notifier, Duration settle, Planner planner, Actor actor, Duration passDeadline) {
    this.engine = engine;
    this.rediscovery = rediscovery;
    this.mounts = mounts;
    this.exits = exits;
    this.poll = poll;
    this.sink = sink;
    this.notifier = notifier;
    this.settleNanos = settle.toNanos();
    this.planner = planner;
    this.actor = actor;
    this.passThread = new PassThread(passDeadline, sink, notifier);
  }

  static Rediscovery rediscovery(MountDiscovery discovery, boolean auto, List<String> configured) {
    return () -> {
      Set<Dev> devs = new HashSet<>();
      discovery.discover(auto, configured).mounts().forEach(m -> devs.add(m.dev()));
      return devs;
    };
  }

  /** Asks for work from another thread (the schedules, the socket); the worker does it on its own thread. */
  void request(Request r) {
    synchronized (requests) {
      requests.add(r);
    }
    poll.wake();
  }

  /**
   * New settings from a reloaded configuration: {@code onPassThread} swaps them in on the pass
   * thread between two passes (the engine's and the planner's), then this worker looks for mounts
   * with {@code newRediscovery} and runs a full pass. The future completes once they are in
   * place; exceptionally if the daemon stops first.
   */
  CompletableFuture<Void> reconfigure(Runnable onPassThread, Rediscovery newRediscovery) {
    Reconfiguration r = new Reconfiguration(onPassThread, newRediscovery, new CompletableFuture<>());
    synchronized (requests) {
      if (reconfiguration != null) {
        reconfiguration.done().completeExceptionally(new IllegalStateException("a newer reload replaced it"));
      }
      reconfiguration = r;
    }
    request(Request.RECONFIGURE);
    return r.done();
  }

  private record Reconfiguration(Runnable onPassThread, Rediscovery rediscovery, CompletableFuture<Void> done) {}

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

  /** Called on the worker thread after every pass; it must be quick and must not throw. */
  void addListener(Consumer<Engine.Pass> listener) {
    listeners.add(listener);
  }

  /** A full pass on the worker thread as soon as it can run, and its result. */
  CompletableFuture<Engine.Pass> passNow() {
    CompletableFuture<Engine.Pass> f = new CompletableFuture<>();
    synchronized (waiters) {
      waiters.add(f);
    }
    request(Request.SWEEP);
    return f;
  }

  /** A pass that reaps nothing, on the pass thread (after any pass running there), and its result. */
  CompletableFuture<Engine.Pass> dryRunNow() {
    return passThread.submit(() -> engine.clean(true));
  }

  void stop() {
    stopping = true;
    poll.wake();
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
      passThread.close();
      failWaiters(new IllegalStateException("the daemon is stopping"));
      synchronized (requests) {
        if (reconfiguration != null) {
          reconfiguration.done().completeExceptionally(new IllegalStateException("the daemon is stopping"));
        }
      }
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
        due(now);
      }
    }
    for (int i = 0; i < holders[0].length; i++) {
      if (ready.get(i + 1)) {
        int pid = holders[0][i];
        exits.exited(pid);
        zombies.putIfAbsent(pid, now);
        LOG.debug("holder {} exited", pid);
        dueOnExit(now - settleNanos); // a death needs no settling: reap what it left at once
      }
    }
    for (Request r : takeRequests()) {
      switch (r) {
        case SWEEP -> {
          due(now - settleNanos);
          requested = true;
        }
        case REDISCOVER -> {
          // discovery reads every namespace's mounts: off this thread, as a pass is
          Set<Dev> found = passThread.run(rediscovery::mounts, () -> stopping, this::pingWatchdog);
          if (found != null && !found.equals(knownMounts)) {
            due(now - settleNanos);
            requested = true;
          }
        }
        case SUMMARY -> summary();
        case RECONFIGURE -> reconfigureNow(now);
      }
    }
    now = System.nanoTime();
    boolean settled = pendingSince >= 0 && now - pendingSince >= settleNanos && (requested || now >= eventsNotBefore);
    boolean retry = retryAt >= 0 && now >= retryAt;
    boolean graceOver = graceEndsAt >= 0 && now >= Math.max(graceEndsAt, eventsNotBefore);
    if (settled || retry || graceOver) {
      passSafely();
    }
    pingWatchdog();
  }

  /** Swaps a reload's settings in on the pass thread (after any pass running there), then asks for a full pass. */
  private void reconfigureNow(long now) {
    Reconfiguration r;
    synchronized (requests) {
      r = reconfiguration;
      reconfiguration = null;
    }
    if (r == null) {
      return;
    }
    Boolean applied = passThread.run(() -> {
      r.onPassThread().run();
      return Boolean.TRUE;
    }, () -> stopping, this::pingWatchdog);
    if (applied == null) {
      r.done().completeExceptionally(new IllegalStateException("the daemon is stopping"));
      return;
    }
    rediscovery = r.rediscovery();
    due(now - settleNanos);
    requested = true;
    r.done().complete(null);
  }

  /** WATCHDOG=1 when due, once READY=1 was sent: from this loop, and while it waits for a pass that is on time. */
  private void pingWatchdog() {
    long now = System.nanoTime();
    if (ready && notifier.watchdogDue(now)) {
      notifier.watchdog(now);
    }
  }

  private void due(long at) {
    rediscover = true;
    dueOnExit(at);
  }

  /** A pass is due because a holder exited: an exit adds or removes no mount, so the next pass may reuse the mounts. */
  private void dueOnExit(long at) {
    if (pendingSince < 0 || at < pendingSince) {
      pendingSince = at;
    }
  }

  private int timeoutMs(long now) {
    long wait = Long.MAX_VALUE;
    if (pendingSince >= 0) {
      long at = pendingSince + settleNanos;
      if (!requested && eventsNotBefore > at) {
        at = eventsNotBefore;
      }
      wait = Math.min(wait, at - now);
    }
    if (retryAt >= 0) {
      wait = Math.min(wait, retryAt - now);
    }
    if (graceEndsAt >= 0) {
      wait = Math.min(wait, Math.max(graceEndsAt, eventsNotBefore) - now);
    }
    Duration wd = notifier.watchdogPeriod();
    if (wd != null) {
      wait = Math.min(wait, wd.toNanos());
    }
    if (wait == Long.MAX_VALUE) {
      return IDLE_WAIT_MS;
    }
    return (int) Math.max(0, Math.min(IDLE_WAIT_MS, (wait + 999_999) / 1_000_000));
  }

  private Set<Request> takeRequests() {
    synchronized (requests) {
      Set<Request> taken = requests.isEmpty() ? Set.of() : EnumSet.copyOf(requests);
      requests.clear();
      return taken;
    }
  }

  private void passSafely() {
    pendingSince = -1;
    retryAt = -1;
    graceEndsAt = -1;
    requested = false;
    try {
      pass();
    } catch (RuntimeException e) {
      LOG.error("a pass failed ({}); the next trigger or sweep tries again", e.toString(), e);
    }
  }

  private void pass() {
    List<CompletableFuture<Engine.Pass>> served;
    synchronized (waiters) {
      served = new ArrayList<>(waiters);
      waiters.clear();
    }
    Engine.Planned planned;
    try {
      boolean sameMounts = !rediscover;
      // observe, judge, plan, and the plan's reap at once after the judgement, all on the pass thread
      planned = passThread.run(() -> engine.pass(false, sameMounts, planner::next, actor::carry), () -> stopping,
          this::pingWatchdog);
      rediscover = false;
    } catch (RuntimeException e) {
      served.forEach(f -> f.completeExceptionally(e));
      throw e;
    }
    if (planned == null) {
      served.forEach(f -> f.completeExceptionally(new IllegalStateException("the daemon is stopping")));
      return;
    }
    Engine.Pass pass = planned.pass();
    Plan plan = planned.plan();
    long took = pass.took().toNanos();
    Judgement j = pass.judgement();
    for (String w : j.snapshot().warnings()) {
      LOG.debug("{}", w);
    }
    if (pass.dryRun()) {
      dryRunLog.log(j);
    }
    for (Action a : planner.report(j, pass.outcomes(), PathWalks.shared().stuckPaths())) {
      carry(a);
    }
    knownMounts = j.snapshot().mounts().stream().map(ShmMount::dev).collect(Collectors.toSet());
    long reapedNow = pass.outcomes().stream().filter(o -> o.result() == ReapOutcome.Result.REAPED).count();
    long end = System.nanoTime();
    budget.spent(took, end);
    eventsNotBefore = budget.nextAt(end);
    if (reapedNow > 0 && j.snapshot().contents().stream().anyMatch(c -> c.unexamined() > 0)) {
      dueOnExit(end - settleNanos); // more files than one pass examines, and this one made room: the next batch
    }
    logCoverage(j);
    // Only mounts it may act in: a change in a mount shmguard only reports needs no pass (it is
    // not listed), and a user churning files in their own tmpfs cannot drive passes.
    if (mounts.sync(j.snapshot().mounts().stream().filter(ShmMount::mayAct).toList())) {
      due(System.nanoTime() - settleNanos); // files created before a new watch existed: look once more
    }
    if (exits.sync(heldByWatchedPids(j))) {
      due(System.nanoTime() - settleNanos);
    }
    trackZombies(j);
    graceEndsAt = plan.lookAgainIn() == null ? -1
        : System.nanoTime() + Math.max(GRACE_MIN_WAIT_NANOS, plan.lookAgainIn().toNanos());
    DaemonStatus before = status;
    status = new DaemonStatus(before.passes() + 1, before.reaped() + reapedNow, mounts.overflows(), mounts.size(),
        exits.size(), took, j, SelfMemory.residentBytes());
    LOG.debug("pass {} took {} ms: {} processes, {}", status.passes(), took / 1_000_000, j.snapshot().processesScanned(),
        status.line());
    if (ready) {
      notifier.status(statusLine());
    }
    for (Action a : plan.actions()) {
      if (!(a instanceof Action.Reap)) { // carried out in the pass
        carry(a);
      }
    }
    for (Consumer<Engine.Pass> l : listeners) {
      try {
        l.accept(pass);
      } catch (RuntimeException e) {
        LOG.error("a pass listener failed: {}", e.toString(), e);
      }
    }
    served.forEach(f -> f.complete(pass));
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

  private void failWaiters(RuntimeException why) {
    synchronized (waiters) {
      waiters.forEach(f -> f.completeExceptionally(why));
      waiters.clear();
    }
  }

  /** Holders of visible segments that a pattern lets shmguard reap: the exits worth waiting for. */
  private static Map<Integer, ProcessInfo> heldByWatchedPids(Judgement j) {
    Map<Integer, ProcessInfo> pids = new HashMap<>();
    for (Assessment a : j.segments()) {
      if (a.verdict() == Verdict.HELD) {
        for (var h : a.holders()) {
          ProcessInfo info = j.snapshot().processes().get(h.pid());
          if (info != null) {
            pids.putIfAbsent(h.pid(), info);
          }
        }
      }
    }
    return pids;
  }

  /** Exited holders still listed in /proc (zombies) get another pass soon, with backoff. */
  private void trackZombies(Judgement j) {
    long now = System.nanoTime();
    zombies.entrySet().removeIf(e -> !j.snapshot().isAlive(e.getKey()) || now - e.getValue() > ZOMBIE_GIVE_UP_NANOS);
    if (zombies.isEmpty()) {
      retryGap = ZOMBIE_RETRY_START_NANOS;
      return;
    }
    retryAt = now + retryGap;
    retryGap = Math.min(ZOMBIE_RETRY_MAX_NANOS, retryGap * 2);
  }

  private void summary() {
    Judgement j = status.last();
    if (j == null) {
      return;
    }
    for (Alert a : planner.summary(j, status.reaped())) {
      carry(new Action.Raise(a));
    }
  }

  /** One planned action, on this thread; one that fails is logged and the others still run. */
  private void carry(Action a) {
    try {
      actor.carry(a);
    } catch (RuntimeException e) {
      LOG.error("an action failed ({}): {}", a.getClass().getSimpleName(), e.toString(), e);
    }
  }
}
