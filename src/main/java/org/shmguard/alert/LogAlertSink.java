package org.shmguard.alert;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Alerts as log lines (stderr, or journald's stdout stream under systemd): the fallback sink.
 * One line each, read at a glance: the message, then the event and its fields in brackets, for
 * grep. The reason is said once (a SHM_REASON the message already holds is not repeated), and a
 * field given once per holder shows its first {@value #SHOWN_REPEATS} values ({@code
 * SHM_HOLDER_PID=101,102,103,+5}); journald, when it is there, gets every field.
 *
 * <pre>{@code
 * reaped /dev/shm/nccl-Ab12 (9.2M, nccl-data, age 4s): unheld; every process that held it has exited (pid 282)
 *     [SHMGUARD_EVENT=segment_reaped SHM_MOUNT=/dev/shm SHM_SEGMENT=nccl-Ab12 SHM_BYTES=9637892 ...]
 * }</pre>
 */
public final class LogAlertSink implements AlertSink {
  private static final Logger LOG = LoggerFactory.getLogger("org.shmguard.alert");
  /** How many values of a repeated field (one per holder) a log line shows. */
  static final int SHOWN_REPEATS = 3;

  @Override
  public void emit(Alert alert) {
    String line = line(alert);
    int p = alert.priority();
    if (p <= 3) {
      LOG.error("{}", line);
    } else if (p == 4) {
      LOG.warn("{}", line);
    } else {
      LOG.info("{}", line);
    }
  }

  /** The one line an alert becomes. */
  public static String line(Alert alert) {
    Map<String, List<String>> fields = new LinkedHashMap<>();
    for (Map.Entry<String, String> f : alert.fields()) {
      if (f.getKey().equals("SHM_REASON") && alert.message().contains(Alert.oneLine(f.getValue()))) {
        continue; // said once, in the message
      }
      fields.computeIfAbsent(f.getKey(), k -> new ArrayList<>()).add(f.getValue());
    }
    StringBuilder sb = new StringBuilder(alert.message()).append(" [SHMGUARD_EVENT=").append(alert.kind().label());
    fields.forEach((name, values) -> {
      sb.append(' ').append(name).append('=');
      for (int i = 0; i < Math.min(values.size(), SHOWN_REPEATS); i++) {
        sb.append(i == 0 ? "" : ",").append(Alert.oneLine(values.get(i)));
      }
      if (values.size() > SHOWN_REPEATS) {
        sb.append(",+").append(values.size() - SHOWN_REPEATS);
      }
    });
    return sb.append(']').toString();
  }

  @Override
  public String describe() {
    return "alerts to standard error, one line each with their fields";
  }
}
