package org.shmguard.daemon;

import java.io.Closeable;
import java.io.IOException;
import java.time.Clock;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import org.shmguard.advice.AdviceService;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
import org.shmguard.advice.ScanAnswer;
import org.shmguard.advice.SocketInUseException;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.remedy.Remounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's advice and remount side, kept apart from the worker: the advice socket and file,
 * root's requests over the socket, and the remounter. The worker's plan reaches both through
 * {@link #acts}; every remount outcome (planned or asked for) goes to the alert sink and to
 * {@code outcomes} (the metrics) as data.
 *
 * <pre>{@code
 * DaemonAdvice advice = DaemonAdvice.start(config, paths, sink, metrics::remounted, metrics::adviceAnswered, scans);
 * Daemon daemon = Daemon.start(config, paths, sink, notifier, advice.acts(sink), List.of(), PassThread.DEADLINE);
 * advice.attach(daemon);
 * }</pre>
 */
final class DaemonAdvice implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(DaemonAdvice.class);
  private static final long CLEAN_TIMEOUT_SECONDS = 60;
  private final Remounter remounter;
  /** Set once in start(), before the daemon's worker thread exists. */
  private AdviceService service;
  private volatile Daemon daemon;

  private DaemonAdvice(Remounter remounter) {
    this.remounter = remounter;
  }

  /**
   * Opens the advice socket (if enabled) before the daemon starts, so it answers once READY is
   * sent. A socket it cannot make is logged and the daemon goes on without it; another daemon
   * answering there is thrown ({@link SocketInUseException}): this one must not start.
   */
  static DaemonAdvice start(Config config, HostPaths paths, AlertSink sink, Consumer<RemountOutcome> outcomes,
      BiConsumer<String, ShmMount> answered, ScanAnswer.Renderer scans) throws IOException {
    Remounter remounter = Remounter.create(config.remount(), paths, Clock.systemUTC()).dryRun(config.reap().dryRun());
    remounter.onOutcome(o -> {
      sink.emit(alert(o));
      outcomes.accept(o);
    });
    DaemonAdvice advice = new DaemonAdvice(remounter);
    if (config.advice().enabled()) {
      try {
        advice.service = AdviceService.start(config, paths, advice.actions(), scans);
        advice.service.onAnswer(answered);
        advice.service.sizeContainers(new org.shmguard.remedy.ContainerShmSizer(new org.shmguard.host.ContainerShmFinder(paths,
            config.namespaces().actInUserNamespaces()), remounter));
      } catch (SocketInUseException e) {
        throw e;
      } catch (IOException e) {
        LOG.error("no advice socket: {}; reaping goes on without it", e.getMessage());
      }
    }
    return advice;
  }

  /** Remounts by {@code config}'s remount section and dry run from now on (a reloaded configuration). */
  void reconfigure(Config config) {
    remounter.reconfigure(config.remount().policy(), config.reap().dryRun());
  }

  /** Lets root's CLEAN requests run through the daemon's worker, so their reaps are alerted like any other. */
  void attach(Daemon d) {
    this.daemon = d;
  }

  /** What root may ask over the socket: a remount through the policy, a clean pass through the daemon. */
  private HostActions actions() {
    return new HostActions() {
      @Override
      public String remount(ShmMount mount, Long sizeBytes) throws ProtocolException {
        RemountOutcome o = remounter.grow(mount, sizeBytes, "asked by root over the advice socket");
        if (o.result() != RemountOutcome.Result.GROWN) {
          throw new ProtocolException(o.result() == RemountOutcome.Result.REFUSED ? ProtocolException.REFUSED
              : ProtocolException.FAILED, o.summary());
        }
        return o.summary();
      }

      @Override
      public String clean(boolean dryRun) throws ProtocolException {
        Daemon d = daemon;
        if (d == null) {
          throw new ProtocolException(ProtocolException.FAILED, "the daemon is still starting; ask again");
        }
        Engine.Pass pass;
        try {
          pass = (dryRun ? d.dryRunPass() : d.passNow()).get(CLEAN_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ProtocolException(ProtocolException.FAILED, "interrupted");
        } catch (ExecutionException | TimeoutException e) {
          throw new ProtocolException(ProtocolException.FAILED, "the pass did not complete: " + e.getMessage());
        }
        long done = pass.outcomes().stream().filter(o -> o.result() == ReapOutcome.Result.REAPED
            || o.result() == ReapOutcome.Result.WOULD_REAP).count();
        return (pass.dryRun() ? "would reap " : "reaped ") + done + " of "
            + org.shmguard.text.Counts.of(pass.outcomes().size(), "candidate") + "; "
            + org.shmguard.text.Counts.of(pass.judgement().plan().blockers().size(), "blocker");
      }
    };
  }

  /**
   * The act stage for the worker's plans, for the daemon's engine: reaps through its reaper,
   * alerts to {@code sink}, advice to the socket and file, remounts.
   */
  Function<Engine, Actor> acts(AlertSink sink) {
    return engine -> new Acts(engine::reap, sink, service, remounter);
  }

  static Alert alert(RemountOutcome o) {
    EventKind kind = switch (o.result()) {
      case GROWN -> EventKind.REMOUNT_GROWN;
      case REFUSED -> EventKind.REMOUNT_REFUSED;
      case FAILED -> EventKind.REMOUNT_FAILED;
    };
    return Alert.of(kind, o.summary())
        .with("SHM_MOUNT", o.mount())
        .with("SHM_SIZE_BEFORE", o.fromBytes())
        .with("SHM_SIZE_AFTER", o.toBytes())
        .with("SHM_OPTIONS_BEFORE", o.optionsBefore())
        .with("SHM_OPTIONS_AFTER", o.optionsAfter())
        .with("SHM_REASON", o.detail());
  }

  @Override
  public void close() throws IOException {
    if (service != null) {
      service.close();
    }
  }
}
