package org.shmguard.daemon;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Output;
import org.shmguard.engine.PassReport;
import org.shmguard.policy.OutcomeAlerts;
import org.shmguard.remedy.ContainerShmSizer;

/**
 * The asked requests the worker carries out at once, on the pass thread between two passes:
 * root's dry-run CLEAN, REMOUNT and PREPARE, and a reload's settings. Each tells the outputs what
 * it did before its answer completes (a remount's outcome and alert), and a stop fails the answer.
 * A full pass's answer is not here: the next pass answers it ({@link WorkQueue#passStarts}).
 *
 * <pre>{@code
 * if (r instanceof WorkRequest.Asked<?> a && asked.carryOut(a) && a instanceof WorkRequest.Reload l) { ... }
 * }</pre>
 */
final class AskedWork {
  private final Engine engine;
  private final Output outputs;
  private final PassThread passThread;
  private final BooleanSupplier stopping;
  private final Runnable whileWaiting;

  /** @param whileWaiting run while the caller waits for the pass thread (the watchdog's ping) */
  AskedWork(Engine engine, Output outputs, PassThread passThread, BooleanSupplier stopping, Runnable whileWaiting) {
    this.engine = engine;
    this.outputs = outputs;
    this.passThread = passThread;
    this.stopping = stopping;
    this.whileWaiting = whileWaiting;
  }

  /**
   * Carries out {@code r} on the pass thread and answers it; true when its answer completed (for a
   * reload: its settings are in place). A {@link WorkRequest.FullPass} is not carried out here.
   */
  boolean carryOut(WorkRequest.Asked<?> r) {
    if (r instanceof WorkRequest.DryRun d) {
      return answer(d.answer(), () -> engine.clean(true)); // reaps nothing, tells nobody: the caller reads it
    }
    if (r instanceof WorkRequest.Remount m) {
      return answer(m.answer(), () -> told(engine.remount(m.mount(), m.sizeBytes(), m.trigger())));
    }
    if (r instanceof WorkRequest.Prepare p) {
      return answer(p.answer(), () -> {
        ContainerShmSizer.Outcome o = p.sizer().size(p.start());
        if (o.remount() != null) {
          told(PassReport.between(List.of(o.remount()), List.of(OutcomeAlerts.remounted(o.remount()))));
        }
        return o;
      });
    }
    if (r instanceof WorkRequest.Reload l) {
      return answer(l.answer(), () -> {
        l.onPassThread().run(); // the engine's, the planner's and the remounter's settings, between two passes
        return null;
      });
    }
    throw new IllegalArgumentException("not carried out at once: " + r.getClass().getSimpleName());
  }

  private <T> boolean answer(WorkRequest.Answer<T> answer, Callable<T> work) {
    return passThread.answer(answer, work, stopping, whileWaiting);
  }

  /** {@code report} told to every output, on the pass thread, before its caller hears of it; null stays null. */
  private PassReport told(PassReport report) {
    if (report != null) {
      outputs.export(report);
    }
    return report;
  }
}
