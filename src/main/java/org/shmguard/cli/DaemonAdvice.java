package org.shmguard.cli;

import java.io.Closeable;
import java.io.IOException;
import java.time.Clock;
import org.shmguard.advice.AdviceService;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
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
 * The daemon's advice and remount side (issue 4), kept apart from the loop: the advice socket and
 * file, fed by every pass, and the remounter that root's requests and critical mounts use.
 *
 * <pre>{@code
 * DaemonAdvice advice = DaemonAdvice.start(config, paths, engine);
 * loop.onPass(advice::onPass);
 * advice.remounter().onCritical(mount);   // where the daemon finds a mount past critical
 * }</pre>
 */
final class DaemonAdvice implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(DaemonAdvice.class);
  private final AdviceService service;
  private final Remounter remounter;

  private DaemonAdvice(AdviceService service, Remounter remounter) {
    this.service = service;
    this.remounter = remounter;
  }

  static DaemonAdvice start(Config config, HostPaths paths, Engine engine) throws IOException {
    Remounter remounter = Remounter.create(config.remount(), paths, Clock.systemUTC());
    AdviceService service = null;
    if (config.advice().enabled()) {
      try {
        service = AdviceService.start(config, paths, actions(engine, remounter));
      } catch (IOException e) {
        LOG.error("no advice socket: {}; reaping goes on without it", e.getMessage());
      }
    }
    return new DaemonAdvice(service, remounter);
  }

  /** What root may ask over the socket: a remount through the policy, a clean pass through the engine. */
  private static HostActions actions(Engine engine, Remounter remounter) {
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
      public String clean(boolean dryRun) {
        Engine.Pass pass = engine.clean(dryRun);
        long done = pass.outcomes().stream().filter(o -> o.result() == ReapOutcome.Result.REAPED
            || o.result() == ReapOutcome.Result.WOULD_REAP).count();
        return (pass.dryRun() ? "would reap " : "reaped ") + done + " of " + pass.outcomes().size() + " candidates; "
            + pass.judgement().plan().blockers().size() + " blockers";
      }
    };
  }

  void onPass(Engine.Pass pass) {
    if (service != null) {
      service.accept(pass.judgement());
    }
  }

  Remounter remounter() {
    return remounter;
  }

  @Override
  public void close() throws IOException {
    if (service != null) {
      service.close();
    }
  }
}
