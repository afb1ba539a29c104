package org.shmguard.engine;

/**
 * Where the daemon tells what it found and did: journald, the metrics, the advice socket and
 * file, systemd's status line. Each is handed every {@link PassReport}, a pass's and those made
 * between passes, and takes from it what it needs; a new output is one class implementing this.
 *
 * <pre>{@code
 * outputs.add(report -> report.alerts().forEach(journal::emit));
 * }</pre>
 */
@FunctionalInterface
public interface Output {
  /**
   * Tells {@code report}. Called on the thread that made it (the daemon's worker, or the thread
   * of an alert between passes), so it must be quick and safe from several threads; one that throws
   * is logged and the other outputs are still told.
   */
  void export(PassReport report);
}
