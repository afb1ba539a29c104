package org.shmguard.metrics;

import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;

/**
 * Counts every alert the daemon raises in the metrics, by kind, then hands it on to the real sink
 * (journald or the log). Outcomes (remounts, reaps) reach the metrics as data, not through here.
 *
 * <pre>{@code
 * AlertSink sink = new CountingAlertSink(JournalAlertSink.choose(), metrics);
 * }</pre>
 */
public final class CountingAlertSink implements AlertSink {
  private final AlertSink next;
  private final MetricsSink metrics;

  public CountingAlertSink(AlertSink next, MetricsSink metrics) {
    this.next = next;
    this.metrics = metrics;
  }

  @Override
  public void emit(Alert alert) {
    try {
      String mount = alert.field("SHM_MOUNT");
      String container = alert.field("SHM_CONTAINER");
      metrics.alertRaised(alert.kind().label(), mount, container, alert.field("SHM_SCOPE"), alert.field("SHM_OWNER_UID"));
    } finally {
      next.emit(alert);
    }
  }

  @Override
  public String describe() {
    return next.describe() + "; counted in the metrics";
  }
}
