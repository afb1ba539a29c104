package org.shmguard.systemd;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.nativ.Journal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Alerts as structured journald entries through sd_journal_sendv. When journald does not take
 * one (it stopped, its socket is gone) the alert goes to the log instead, the operator is told
 * once, and the next alert tries journald again.
 *
 * <pre>{@code
 * AlertSink sink = JournalAlertSink.chooseFor(Path.of("/run/systemd/journal/socket"));
 * }</pre>
 */
public final class JournalAlertSink implements AlertSink {
  private static final Logger LOG = LoggerFactory.getLogger(JournalAlertSink.class);
  public static final Path SOCKET = Path.of("/run/systemd/journal/socket");

  private final Journal journal;
  private final AlertSink fallback;
  private volatile boolean failing;

  JournalAlertSink(Journal journal, AlertSink fallback) {
    this.journal = journal;
    this.fallback = fallback;
  }

  /** journald when libsystemd loads and its socket exists, else the log; the choice is logged by the caller. */
  public static AlertSink choose() {
    Journal j = Journal.load();
    if (!j.available()) {
      return new Unavailable(j.unavailableReason());
    }
    if (!Files.exists(SOCKET)) {
      return new Unavailable("journald is not running here (" + SOCKET + " does not exist)");
    }
    return new JournalAlertSink(j, new LogAlertSink());
  }

  @Override
  public void emit(Alert alert) {
    try {
      journal.send(alert.journalFields());
      if (failing) {
        failing = false;
        LOG.info("journald takes alerts again");
      }
    } catch (IOException e) {
      if (!failing) {
        failing = true;
        LOG.warn("journald did not take an alert ({}); alerts go to the log until it is back", e.getMessage());
      }
      fallback.emit(alert);
    }
  }

  @Override
  public String describe() {
    return "alerts to journald (journalctl -x explains each)";
  }

  /** The log sink, saying why journald is not used. */
  private static final class Unavailable implements AlertSink {
    private final LogAlertSink log = new LogAlertSink();
    private final String why;

    Unavailable(String why) {
      this.why = why;
    }

    @Override
    public void emit(Alert alert) {
      log.emit(alert);
    }

    @Override
    public String describe() {
      return why + "; " + log.describe();
    }
  }
}
