package org.shmguard.config;

import java.time.Duration;
import java.util.List;
import org.shmguard.text.Glob;

/** {@code reap}: which segments may be reaped and when. */
final class ReapSection extends ConfigSection<Config.Reap> {
  ReapSection() {
    super("reap");
    key("dryRun", Types.bool());
    key("grace", Types.duration(Duration.ZERO, Duration.ofDays(30)));
    key("patterns", Types.reapPatterns());
    key("deny", Types.globs());
    key("requireHostPidNamespace", Types.bool());
    key("examineLimit", Types.integer(1, 1_000_000)); // memory bound per mount
    key("examineTotal", Types.integer(1, 10_000_000)); // memory bound for the whole host
  }

  @Override
  Config.Reap read(Values v) {
    return new Config.Reap(v.get("dryRun"), v.get("grace"), v.get("patterns"), v.get("deny"),
        v.get("requireHostPidNamespace"), v.get("examineLimit"), v.get("examineTotal"),
        FamilySection.rules(v));
  }

  /**
   * A pattern that reap.deny also lists would never reap anything; a mount's share can never
   * exceed the whole host's budget.
   */
  @Override
  void check(Values v) throws ConfigException {
    int limit = v.get("examineLimit");
    int total = v.get("examineTotal");
    if (limit > total) {
      throw v.broken("reap.examineLimit", "reap.examineTotal", "reap.examineLimit (" + limit
          + ") is more than reap.examineTotal (" + total + "), the most files a pass keeps over all mounts; "
          + "allowed: reap.examineLimit at most reap.examineTotal");
    }
    List<Glob> deny = v.get("deny");
    for (Glob pattern : v.<List<Glob>>get("patterns")) {
      if (deny.contains(pattern)) {
        throw v.broken("reap.patterns", "reap.deny", "\"" + pattern + "\" is also in reap.deny, so it would never reap anything; "
            + "allowed: patterns that reap.deny does not list");
      }
    }
  }
}
