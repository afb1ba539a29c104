package org.shmguard.engine;

import org.shmguard.alert.AlertSink;

/**
 * The output that tells every alert of a report to an {@link AlertSink}: journald when it is
 * there, the log otherwise (systemd's {@code JournalAlertSink.choose()}), or a test's recorder.
 */
public final class AlertOutput implements Output {
  private final AlertSink sink;

  public AlertOutput(AlertSink sink) {
    this.sink = sink;
  }

  @Override
  public void export(PassReport report) {
    report.alerts().forEach(sink::emit);
  }
}
