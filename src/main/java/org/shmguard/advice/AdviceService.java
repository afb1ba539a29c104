package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.shmguard.engine.Output;
import org.shmguard.engine.PassReport;
import org.shmguard.policy.Action;
import org.shmguard.host.NvidiaProc;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.config.Config;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Judgement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's side of advice, as one of its outputs: keeps the judgement each pass's plan says
 * to advise from, serves it on the socket, and rewrites the advice file after each pass. The
 * daemon hands it every report ({@link #export}) and needs nothing else from this package.
 *
 * <pre>{@code
 * AdviceService advice = AdviceService.start(config, paths, daemon.rootRequests(), metrics::adviceAnswered);
 * outputs.add(advice);
 * }</pre>
 */
public final class AdviceService implements Output, Consumer<Judgement>, Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(AdviceService.class);
  private final AtomicReference<Judgement> latest;
  private final AdviceResponder responder;
  private final AdviceServer server;
  private final AdviceFile file;

  private AdviceService(AtomicReference<Judgement> latest, AdviceResponder responder, AdviceServer server, AdviceFile file) {
    this.latest = latest;
    this.responder = responder;
    this.server = server;
    this.file = file;
  }

  /**
   * Opens the socket (or takes systemd's) and returns the running service; root's SCAN is answered
   * as {@code shmguard scan} prints it ({@link ScanAnswer}); {@code answered} is told the action of
   * every ADVISE answer and the mount it was about, from the first (the metrics count them).
   */
  public static AdviceService start(Config config, HostPaths paths, HostActions actions,
      java.util.function.BiConsumer<String, ShmMount> answered) throws IOException {
    Config.Advice c = config.advice();
    HostGpus gpus = NvidiaProc.read(paths);
    LOG.info("advice: NVIDIA driver {}, {} GPU(s) listed", gpus.driver() == null ? "not found" : gpus.driver(), gpus.gpuCount());
    AtomicReference<Judgement> ref = new AtomicReference<>();
    AdviceResponder responder = new AdviceResponder(ref::get, () -> gpus, new AdviceEngine(c.defaultLocalRanks()), actions)
        .answerChecks(HealthAnswer.of(config)).answerScans(ScanAnswer.of(config)).reportAnswersTo(answered);
    AdviceServer.Limits limits = AdviceServer.Limits.of(c);
    AdviceServer server = AdviceServer.inherited(responder, limits);
    if (server == null) {
      server = AdviceServer.bind(c.socket(), responder, limits);
    }
    AdviceService service = new AdviceService(ref, responder, server, new AdviceFile(c.envFile()));
    server.start();
    return service;
  }

  /** A pass's report: its plan's {@link Action.Advise} is what advice is about from now on. */
  @Override
  public void export(PassReport report) {
    if (report.isPass()) {
      for (Action a : report.plan().actions()) {
        if (a instanceof Action.Advise advise) {
          accept(advise.judgement());
        }
      }
    }
  }

  /** A new judgement: advice from now on is about it, and the advice file follows it. */
  @Override
  public void accept(Judgement j) {
    latest.set(j);
    try {
      // Rewritten only when it changed, or after a failed write (AdviceFile sees to both).
      file.write(responder.advise(AdviseRequest.HOST_DEFAULT));
    } catch (ProtocolException e) {
      LOG.debug("advice file not written: {}", e.getMessage());
    }
  }

  @Override
  public void close() throws IOException {
    file.close();
    server.close();
  }
}
