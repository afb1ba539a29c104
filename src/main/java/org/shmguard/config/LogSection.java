package org.shmguard.config;

/** {@code log}: how much the daemon logs. */
final class LogSection extends ConfigSection<Config.Log> {
  LogSection() {
    super("log");
    key("level", Types.oneOf("error", "warn", "info", "debug"));
  }

  @Override
  Config.Log read(Values v) {
    return new Config.Log(v.get("level"));
  }
}
