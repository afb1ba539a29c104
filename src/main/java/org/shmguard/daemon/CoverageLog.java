package org.shmguard.daemon;

import org.shmguard.model.Snapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a pass did not examine, said for an operator: at info when what is left out changes
 * (files beyond the shares, how many report-only mounts, how many namespaces beyond the limit),
 * else at debug, so a crowded mount that drains over many passes is one line, not one per pass.
 *
 * <pre>{@code
 * coverage.after(report.judgement().snapshot());
 * }</pre>
 */
final class CoverageLog {
  private static final Logger LOG = LoggerFactory.getLogger(CoverageLog.class);
  static final String ALL_AGAIN = "every mount found is examined again";

  /** What was last said at info, in short; null when everything was examined. */
  private String logged;

  /** A line to log, and whether at info. */
  record Line(boolean info, String text) {}

  /** Logs what {@code snap} left out, as {@link #next} says. */
  void after(Snapshot snap) {
    long unexamined = snap.contents().stream().mapToLong(c -> c.unexamined()).sum();
    Line l = next(snap.notExamined(), (unexamined > 0) + "/" + snap.coverage().reportOnlyMounts() + "/"
        + snap.coverage().namespacesLeftOut());
    if (l != null && l.info()) {
      LOG.info("{}", l.text());
    } else if (l != null) {
      LOG.debug("{}", l.text());
    }
  }

  /**
   * The line for a pass that left out {@code notExamined} (null: nothing), whose kind of leaving
   * out is {@code key}; null for nothing to say.
   */
  Line next(String notExamined, String key) {
    Line line = null;
    if (notExamined != null) {
      line = new Line(!key.equals(logged), "not examined in this pass: " + notExamined);
    } else if (logged != null && !logged.equals(key)) {
      line = new Line(true, ALL_AGAIN);
    }
    logged = notExamined == null ? null : key;
    return line;
  }
}
