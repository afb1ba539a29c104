package org.shmguard.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every {@link Output} of the daemon, told each report in the order they were added; one that
 * fails is logged and the others are still told. Alerts raised between passes reach all of them
 * through {@link #sink()}.
 *
 * <pre>{@code
 * Outputs outputs = new Outputs().add(new AlertOutput(journal)).add(metrics);
 * outputs.export(engine.pass(false, false));
 * }</pre>
 */
public final class Outputs implements Output {
  private static final Logger LOG = LoggerFactory.getLogger(Outputs.class);
  private final List<Output> outputs = new CopyOnWriteArrayList<>();
  private final String describe;

  /** @param describe where alerts go, for the start-up log (see {@link AlertSink#describe}) */
  public Outputs(String describe) {
    this.describe = describe;
  }

  public Outputs add(Output output) {
    outputs.add(output);
    return this;
  }

  @Override
  public void export(PassReport report) {
    for (Output o : outputs) {
      try {
        o.export(report);
      } catch (RuntimeException e) {
        LOG.error("an output failed ({}): {}", o.getClass().getSimpleName(), e.toString(), e);
      }
    }
  }

  /** An alert sink for alerts between passes (a stalled path, a reload, the summary): each becomes a report. */
  public AlertSink sink() {
    return new AlertSink() {
      @Override
      public void emit(Alert alert) {
        export(PassReport.of(alert));
      }

      @Override
      public String describe() {
        return describe;
      }
    };
  }
}
