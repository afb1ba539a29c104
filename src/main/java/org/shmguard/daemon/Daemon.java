package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountChanges;
import org.shmguard.host.MountDiscovery;
import org.shmguard.host.PathWalks;
import org.shmguard.host.ProcessDetails;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Inotify;
import org.shmguard.nativ.Poll;
import org.shmguard.text.Durations;
import org.shmguard.policy.Planner;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long-running service: the {@link Engine} pipeline driven by inotify, holder exits and
 * timers on one worker thread, reporting to an {@link AlertSink} and to systemd.
 *
 * <pre>{@code
 * try (Daemon d = Daemon.start(config, HostPaths.system(), JournalAlertSink.choose(), ServiceNotifier.fromEnvironment())) {
 *   d.awaitStopped(Duration.ofDays(365));
 * }
 * }</pre>
 */
public final class Daemon implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);
  private final Worker worker;
  private final Thread thread;
  private final Schedules schedules;
  private final HostPaths paths;
  private final Engine engine;
  private final Planner planner;

  private Daemon(Worker worker, Thread thread, Schedules schedules, HostPaths paths, Engine engine, Planner planner) {
    this.worker = worker;
    this.thread = thread;
    this.schedules = schedules;
    this.paths = paths;
    this.engine = engine;
    this.planner = planner;
  }

  /** Starts the worker thread and the schedules; the first pass runs at once. */
  public static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier) throws IOException {
    return start(config, paths, sink, notifier, List.of());
  }

  /**
   * As above, with listeners told of every pass (the first one included) on the worker thread,
   * after its planned actions: metrics, say. Each must be quick.
   */
  public static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier,
      List<Consumer<Engine.Pass>> listeners) throws IOException {
    return start(config, paths, sink, notifier, listeners, PassThread.DEADLINE);
  }

  /** As above, with the deadline after which a running pass counts as stalled (tests shorten it). */
  static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier,
      List<Consumer<Engine.Pass>> listeners, Duration passDeadline) throws IOException {
    return start(config, paths, sink, notifier, engine -> Acts.bare(engine::reap, sink), listeners, passDeadline);
  }

  /**
   * As above, with the act stage for each pass's plan, made for the daemon's engine (whose
   * reaper carries out the plan's reaps): the whole service's (advice and remounts, see
   * {@link Service}) or reaps and alerts only.
   */
  static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier,
      Function<Engine, Actor> acts, List<Consumer<Engine.Pass>> listeners, Duration passDeadline) throws IOException {
    return start(config, paths, sink, notifier, acts, listeners, passDeadline, HolderState.NONE);
  }

  /**
   * As above, starting from what {@code state} remembers of the daemon before a restart and
   * keeping this one's holder history there after every pass.
   */
  static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier,
      Function<Engine, Actor> acts, List<Consumer<Engine.Pass>> listeners, Duration passDeadline, HolderState state)
      throws IOException {
    Config.Daemon d = config.daemon();
    if (config.reap().dryRun()) {
      LOG.warn("shmguard starting in a dry run: it reports what it would reap and remount, and changes nothing");
    }
    LOG.info("shmguard starting with {}: sweep every {}, rediscovery every {}, grace {}, patterns {}, deny {}{}; {}",
        config.source(), Durations.human(d.interval()), Durations.human(d.rediscover()),
        Durations.human(config.reap().grace()), config.reap().patterns(), config.reap().deny(),
        config.reap().dryRun() ? ", dry run" : "", sink.describe());
    Engine engine = Engine.create(config, paths);
    engine.remember(state.load());
    ProcessDetails details = new ProcessDetails(paths);
    Config.Capacity c = config.capacity();
    Poll poll = Poll.create();
    Planner planner = new Planner(engine.policy(), config.remount().policy(), c.policy(), c.topHolders());
    Worker worker = new Worker(engine, rediscovery(config, paths),
        new MountWatches(Inotify.open()),
        new ExitWatches(d.watchHolders(), pid -> {
          ProcessInfo info = details.read(pid);
          return info == null ? null : info.startTicks();
        }),
        poll, sink, notifier, d.settle(),
        planner, acts.apply(engine), passDeadline);
    listeners.forEach(worker::addListener);
    if (state != HolderState.NONE) {
      worker.addListener(pass -> state.keep(pass.judgement().snapshot(), engine.history()));
    }
    PathWalks.shared().onStallAndRecovery(
        path -> sink.emit(Alert.of(EventKind.MOUNT_STALLED, path + " did not answer within "
            + PathWalks.DEADLINE.toMillis() + " ms (its filesystem, or one on the way to it, is not answering);"
            + " the mount behind it is skipped until it does").with("SHM_PATH", path)),
        path -> sink.emit(Alert.of(EventKind.MOUNT_STALLED, path + " answers again; the mount behind it is watched"
            + " from the next pass").with("SHM_PATH", path).with("SHM_RECOVERED", 1)));
    Thread thread = new Thread(() -> {
      try {
        worker.run();
      } finally {
        poll.close();
      }
    }, "shmguard-worker");
    thread.start();
    try {
      return new Daemon(worker, thread, Schedules.start(worker, d.interval(), d.rediscover(), d.summary()), paths, engine,
          planner);
    } catch (org.quartz.SchedulerException | RuntimeException | LinkageError e) {
      // LinkageError: Quartz needs java.beans (the java.desktop module), which a trimmed runtime may lack
      worker.stop();
      throw new IOException("cannot start the schedules: " + e, e);
    }
  }

  /** A full discovery only when what it reads changed (MountChanges): a quiet host's rediscovery is cheap. */
  private static Worker.Rediscovery rediscovery(Config config, HostPaths paths) {
    // A full discovery only when what it reads changed (MountChanges): a quiet host's rediscovery is cheap.
    return new MountChanges(paths, new MountDiscovery(paths, config.namespaces().actInUserNamespaces(),
        config.namespaces().reportLimit(), config.runtimes()), config.autoDiscover(), config.mountPaths())::devices;
  }

  /**
   * Runs with {@code config}'s settings from the next pass on: what it watches and reaps
   * (mounts, reap, families, namespaces), capacity thresholds and the remount trigger; what it
   * learned is kept (holder history, capacity levels, what it reported). The sections read only
   * at start ({@link org.shmguard.config.ConfigChanges#RESTART_SECTIONS}) are not looked at. The
   * future completes once the settings are in place, before the pass they start with.
   */
  public CompletableFuture<Void> reconfigure(Config config) {
    Engine fresh = Engine.create(config, paths);
    Config.Capacity c = config.capacity();
    return worker.reconfigure(() -> {
      engine.adopt(fresh);
      planner.reconfigure(fresh.policy(), config.remount().policy(), c.policy(), c.topHolders());
    }, rediscovery(config, paths));
  }

  /** Whether the first full pass is done and systemd was told READY=1. */
  public boolean ready() {
    return worker.ready();
  }

  /** The one-line status systemd shows (STATUS=), with a note if one is set. */
  public String statusLine() {
    return worker.statusLine();
  }

  /** A note said after the status line from now on (a rejected reload), null for none. */
  public void note(String text) {
    worker.note(text);
  }

  /** What the daemon has done so far. */
  public DaemonStatus status() {
    return worker.status();
  }

  /** True when the worker stopped on an error, not on request: the service should exit non-zero. */
  public boolean failed() {
    return worker.failed();
  }

  /** Asks for a full pass now, as the periodic sweep would. */
  public void sweepNow() {
    worker.request(Worker.Request.SWEEP);
  }

  /** A full pass (reaping included) on the worker thread, with its alerts, as soon as it can run. */
  public CompletableFuture<Engine.Pass> passNow() {
    return worker.passNow();
  }

  /**
   * A pass that decides and reaps nothing, run after any pass in progress on the daemon's pass
   * thread; the caller bounds its wait, so a pass stuck in the kernel holds no caller's thread.
   */
  public CompletableFuture<Engine.Pass> dryRunPass() {
    return worker.dryRunNow();
  }

  /** Asks for the journal summary now, as its cron schedule would. */
  public void summaryNow() {
    worker.request(Worker.Request.SUMMARY);
  }

  /** Stops the schedules and the worker (which tells systemd STOPPING=1). */
  public void stop() {
    schedules.close();
    worker.stop();
  }

  /** Waits until the worker has stopped; true if it did within {@code d}. */
  public boolean awaitStopped(Duration d) throws InterruptedException {
    return worker.awaitStopped(d);
  }

  @Override
  public void close() {
    stop();
    try {
      if (!worker.awaitStopped(Duration.ofSeconds(30))) {
        LOG.warn("the worker did not stop within 30s");
      }
      thread.join(1000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
