package org.shmguard.config;

/** {@code capacity}: the used percentages that raise alerts, and how many holders of hidden bytes to name. */
final class CapacitySection extends ConfigSection<Config.Capacity> {
  CapacitySection() {
    super("capacity");
    key("warn", Types.integer(1, 100));
    key("critical", Types.integer(1, 100));
    key("hysteresis", Types.integer(0, 50));
    key("topHolders", Types.integer(0, 100));
  }

  @Override
  Config.Capacity read(Values v) {
    return new Config.Capacity(v.get("warn"), v.get("critical"), v.get("hysteresis"), v.get("topHolders"));
  }

  /** warn below critical, and a hysteresis smaller than warn. */
  @Override
  void check(Values v) throws ConfigException {
    int warn = v.get("warn");
    int critical = v.get("critical");
    int hysteresis = v.get("hysteresis");
    if (critical <= warn) {
      throw v.broken("capacity.critical", "capacity.warn", critical + " must be above capacity.warn (" + warn
          + "); allowed: a whole number from " + (warn + 1) + " to 100");
    }
    if (hysteresis >= warn) {
      throw v.broken("capacity.hysteresis", "capacity.warn", hysteresis + " must be below capacity.warn (" + warn
          + "); allowed: a whole number from 0 to " + Math.min(warn - 1, 50));
    }
  }
}
