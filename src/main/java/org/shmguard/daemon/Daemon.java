package org.shmguard.daemon;

import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountChanges;
import org.shmguard.host.MountDiscovery;
import org.shmguard.host.PathWalks;
import org.shmguard.host.ProcessDetails;
import org.shmguard.model.Dev;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Inotify;
import org.shmguard.nativ.Poll;
import org.shmguard.text.Durations;
import org.shmguard.policy.Planner;
import org.shmguard.host.ContainerShmFinder;
import org.shmguard.remedy.ContainerShmSizer;
import org.shmguard.remedy.Remounter;
import org.shmguard.systemd.ServiceNotifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The long-running service: the {@link Engine} pipeline driven by inotify, holder exits and
 * timers on one worker thread, each pass's {@link PassReport} told to the daemon's outputs
 * (journald or an {@link AlertSink}, systemd, and in the whole service metrics and advice).
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
  private final Poll poll;
  private final Config.Daemon settings;
  private final HostPaths paths;
  private final Engine engine;
  private final Planner planner;
  private final Remounter remounter;
  /** namespaces.actInUserNamespaces: whether a container of a user's own namespaces may be sized. */
  private final boolean actInUserNamespaces;
  /** Set by begin(): the worker thread and the schedules. */
  private Thread thread;
  private Schedules schedules;
  /** RELOAD's action once the service has a configuration file to read again; null before, or without one. */
  private volatile ConfigReload reload;

  private Daemon(Worker worker, Poll poll, Config.Daemon settings, HostPaths paths, Engine engine, Planner planner,
      Remounter remounter, boolean actInUserNamespaces) {
    this.worker = worker;
    this.actInUserNamespaces = actInUserNamespaces;
    this.poll = poll;
    this.settings = settings;
    this.paths = paths;
    this.engine = engine;
    this.planner = planner;
    this.remounter = remounter;
  }

  /** Starts the worker thread and the schedules; the first pass runs at once. Alerts go to {@code sink}; nothing is remounted. */
  public static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier) throws IOException {
    return start(config, paths, sink, notifier, PassThread.DEADLINE);
  }

  /** As above, with the deadline after which a running pass counts as stalled (tests shorten it). */
  static Daemon start(Config config, HostPaths paths, AlertSink sink, ServiceNotifier notifier, Duration passDeadline)
      throws IOException {
    Outputs outputs = new Outputs(sink.describe()).add(new AlertOutput(sink));
    return create(config, paths, outputs, notifier, null, passDeadline, HolderState.NONE).begin();
  }

  /**
   * The daemon, not yet started: its engine (planned by a {@link Planner}, acting through its
   * reaper and {@code remounter}), and its worker, which tells {@code outputs} every report.
   * Root's requests over the socket reach it through {@link #rootRequests} from now on; they are
   * answered once {@link #begin} started it. The holder history starts from what {@code state}
   * remembers of the daemon before a restart, and is kept there after every pass.
   *
   * @param remounter grows mounts the plan names and root asks for; null for none
   */
  static Daemon create(Config config, HostPaths paths, Outputs outputs, ServiceNotifier notifier, Remounter remounter,
      Duration passDeadline, HolderState state) throws IOException {
    Config.Daemon d = config.daemon();
    if (config.reap().dryRun()) {
      LOG.warn("shmguard starting in a dry run: it reports what it would reap and remount, and changes nothing");
    }
    AlertSink sink = outputs.sink();
    // One short line an operator reads whole: the files, the schedule, what it may reap, where alerts go.
    LOG.info("shmguard starting with {}: sweep {}, {}, rediscovery {}, grace {}, reaps {}{}{}; {}",
        config.source(), Durations.human(d.interval()),
        d.heartbeat().compareTo(d.interval()) < 0 ? "heartbeat " + Durations.human(d.heartbeat()) : "no heartbeat",
        Durations.human(d.rediscover()), Durations.human(config.reap().grace()), words(config.reap().patterns()),
        config.reap().deny().isEmpty() ? "" : " but not " + words(config.reap().deny()),
        config.reap().dryRun() ? " (dry run)" : "", sink.describe());
    Config.Capacity c = config.capacity();
    Planner planner = new Planner(config.reap().policy(), config.remount().policy(), c.policy(), c.topHolders());
    Engine engine = Engine.create(config, paths, planner, remounter);
    engine.remember(state.load());
    ProcessDetails details = new ProcessDetails(paths);
    if (state != HolderState.NONE) {
      outputs.add(report -> {
        if (report.isPass()) {
          state.keep(report.judgement().snapshot(), engine.history());
        }
      });
    }
    Poll poll = Poll.create();
    Watches watches = new Watches(new MountWatches(Inotify.open()), new ExitWatches(d.watchHolders(), pid -> {
      ProcessInfo info = details.read(pid);
      return info == null ? null : info.startTicks();
    }), poll);
    Worker worker = new Worker(engine, rediscovery(config, paths), watches, outputs, notifier, d.settle(), planner,
        passDeadline);
    PathWalks.shared().onStallAndRecovery(
        path -> sink.emit(Alert.of(EventKind.MOUNT_STALLED, path + " did not answer within "
            + PathWalks.DEADLINE.toMillis() + " ms (its filesystem, or one on the way to it, is not answering);"
            + " the mount behind it is skipped until it does").with("SHM_PATH", path)),
        path -> sink.emit(Alert.of(EventKind.MOUNT_STALLED, path + " answers again; the mount behind it is watched"
            + " from the next pass").with("SHM_PATH", path).with("SHM_RECOVERED", 1)));
    return new Daemon(worker, poll, d, paths, engine, planner, remounter, config.namespaces().actInUserNamespaces());
  }

  /** Starts the worker thread and the schedules; the first pass runs at once. */
  Daemon begin() throws IOException {
    thread = new Thread(() -> {
      try {
        worker.run();
      } finally {
        poll.close();
      }
    }, "shmguard-worker");
    thread.start();
    try {
      schedules = Schedules.start(worker, settings.interval(), settings.heartbeat(), settings.rediscover(), settings.summary());
      return this;
    } catch (RuntimeException | LinkageError e) {
      worker.stop();
      throw new IOException("cannot start the schedules: " + e, e);
    }
  }

  /** Globs as the configuration writes them, space-separated: "nccl-* torch_*". */
  private static String words(java.util.List<?> globs) {
    return globs.stream().map(Object::toString).collect(java.util.stream.Collectors.joining(" "));
  }

  /** The worker thread's side of this daemon (tests ask it directly). */
  Worker worker() {
    return worker;
  }

  /** What root may ask over the advice socket (a clean pass, a remount, a container's size): requests to this daemon's worker. */
  RootRequests rootRequests() {
    return new RootRequests(worker, remounter == null ? null
        : new ContainerShmSizer(new ContainerShmFinder(paths, actInUserNamespaces), remounter), () -> {
          ConfigReload r = reload;
          return r == null ? null : r.reload();
        });
  }

  /** RELOAD over the socket runs {@code r} from now on, as SIGHUP does. */
  void reloadWith(ConfigReload r) {
    this.reload = r;
  }

  /** A full discovery only when what it reads changed (MountChanges): a quiet host's rediscovery is cheap. */
  private static Rediscovery rediscovery(Config config, HostPaths paths) {
    // A full discovery only when what it reads changed (MountChanges): a quiet host's rediscovery is cheap.
    MountChanges changes = new MountChanges(paths, new MountDiscovery(paths, config.namespaces().actInUserNamespaces(),
        config.namespaces().reportLimit(), config.runtimes()), config.autoDiscover(), config.mountPaths());
    return new Rediscovery() {
      @Override
      public Set<Dev> mounts() {
        return changes.devices();
      }

      @Override
      public boolean containerEnded() {
        return changes.containerEnded();
      }
    };
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
    return worker.ask(WorkRequest.reload(() -> {
      engine.adopt(fresh);
      planner.reconfigure(fresh.policy(), config.remount().policy(), c.policy(), c.topHolders());
      if (remounter != null) {
        remounter.reconfigure(config.remount().policy(), config.reap().dryRun());
      }
    }, rediscovery(config, paths)));
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

  /** How many heartbeats ran since start (each a statvfs per mount, not a pass). */
  public long heartbeats() {
    return worker.heartbeats();
  }

  /** True when the worker stopped on an error, not on request: the service should exit non-zero. */
  public boolean failed() {
    return worker.failed();
  }

  /** Asks for a full pass now, as the periodic sweep would. */
  public void sweepNow() {
    worker.offer(WorkRequest.Trigger.SWEEP);
  }

  /** A full pass (reaping included) on the worker thread, with its alerts, as soon as it can run. */
  public CompletableFuture<PassReport> passNow() {
    return worker.ask(WorkRequest.fullPass());
  }

  /**
   * A pass that decides and reaps nothing, run after any pass in progress on the daemon's pass
   * thread; the caller bounds its wait, so a pass stuck in the kernel holds no caller's thread.
   */
  public CompletableFuture<PassReport> dryRunPass() {
    return worker.ask(WorkRequest.dryRun());
  }

  /** Asks for the journal summary now, as its cron schedule would. */
  public void summaryNow() {
    worker.offer(WorkRequest.Trigger.SUMMARY);
  }

  /** Stops the schedules and the worker (which tells systemd STOPPING=1). */
  public void stop() {
    if (schedules != null) {
      schedules.close();
    }
    worker.stop();
  }

  /** Waits until the worker has stopped; true if it did within {@code d}. */
  public boolean awaitStopped(Duration d) throws InterruptedException {
    return worker.awaitStopped(d);
  }

  @Override
  public void close() {
    stop();
    if (thread == null) { // made, never begun (the advice socket could not start): nothing runs
      worker.abandon();
      poll.close();
      return;
    }
    try {
      if (!worker.awaitStopped(Duration.ofSeconds(30))) {
        LOG.warn("the worker did not stop within 30s");
      }
      if (thread != null) {
        thread.join(1000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
