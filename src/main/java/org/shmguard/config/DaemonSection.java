package org.shmguard.config;

import java.time.Duration;
import org.shmguard.text.Durations;

/** {@code daemon}: the service's schedules and limits. */
final class DaemonSection extends ConfigSection<Config.Daemon> {
  DaemonSection() {
    super("daemon");
    key("interval", Types.duration(Duration.ofMillis(100), Duration.ofDays(1)));
    key("heartbeat", Types.duration(Duration.ofMillis(100), Duration.ofDays(1)));
    key("rediscover", Types.duration(Duration.ofMillis(100), Duration.ofHours(1)));
    key("settle", Types.duration(Duration.ZERO, Duration.ofSeconds(10)));
    key("watchHolders", Types.integer(0, 65_536));
    key("summary", Types.cron());
  }

  @Override
  Config.Daemon read(Values v) {
    return new Config.Daemon(v.get("interval"), v.get("heartbeat"), v.get("rediscover"), v.get("settle"), v.get("watchHolders"), v.get("summary"));
  }

  /** Events must not wait longer than the full sweep. */
  @Override
  void check(Values v) throws ConfigException {
    Duration settle = v.get("settle");
    Duration interval = v.get("interval");
    if (settle.compareTo(interval) >= 0) {
      throw v.broken("daemon.settle", "daemon.interval", Durations.human(settle) + " is not shorter than daemon.interval ("
          + Durations.human(interval) + "): events would wait longer than the full sweep; allowed: a duration below daemon.interval");
    }
  }
}
