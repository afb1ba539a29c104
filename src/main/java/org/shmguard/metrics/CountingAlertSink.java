package org.shmguard.metrics;

import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;

/**
 * Counts every alert the daemon raises (and the remount outcomes among them) in the metrics,
 * then hands it on to the real sink (journald or the log).
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
      metrics.alertRaised(alert.kind().label(), mount, container);
      String remount = remountResult(alert.kind());
      if (remount != null) {
        metrics.remounted(mount, container, remount);
      }
    } finally {
      next.emit(alert);
    }
  }

  private static String remountResult(EventKind kind) {
    return switch (kind) {
      case REMOUNT_GROWN -> "ok";
      case REMOUNT_REFUSED -> "refused";
      case REMOUNT_FAILED -> "failed";
      default -> null;
    };
  }

  @Override
  public String describe() {
    return next.describe() + "; counted in the metrics";
  }
}
