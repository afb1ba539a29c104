package org.shmguard.alert;

import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Alerts as log lines (stderr, or journald's stdout stream under systemd): the fallback sink. */
public final class LogAlertSink implements AlertSink {
  private static final Logger LOG = LoggerFactory.getLogger("org.shmguard.alert");

  @Override
  public void emit(Alert alert) {
    StringBuilder sb = new StringBuilder(alert.message()).append(" [SHMGUARD_EVENT=").append(alert.kind().label());
    for (Map.Entry<String, String> f : alert.fields()) {
      sb.append(' ').append(f.getKey()).append('=').append(f.getValue());
    }
    sb.append(']');
    int p = alert.kind().priority();
    if (p <= 3) {
      LOG.error("{}", sb);
    } else if (p == 4) {
      LOG.warn("{}", sb);
    } else {
      LOG.info("{}", sb);
    }
  }

  @Override
  public String describe() {
    return "alerts go to the log (standard error), one line each with their fields";
  }
}
