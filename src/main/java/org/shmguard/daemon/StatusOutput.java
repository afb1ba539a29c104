package org.shmguard.daemon;

import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.shmguard.engine.Output;
import org.shmguard.engine.PassReport;
import org.shmguard.systemd.ServiceNotifier;

/**
 * systemd's status line (STATUS=) as an output: after every pass, once READY=1 was sent, the
 * worker's one-line account of what it watches and did.
 */
final class StatusOutput implements Output {
  private final ServiceNotifier notifier;
  private final BooleanSupplier ready;
  private final Supplier<String> line;

  StatusOutput(ServiceNotifier notifier, BooleanSupplier ready, Supplier<String> line) {
    this.notifier = notifier;
    this.ready = ready;
    this.line = line;
  }

  @Override
  public void export(PassReport report) {
    if (report.isPass() && ready.getAsBoolean()) {
      notifier.status(line.get());
    }
  }
}
