package org.shmguard.config;

import java.time.Duration;
import org.shmguard.text.SizeSpec;

/** {@code remount}: growing a tmpfs that is too small; off unless enabled. */
final class RemountSection extends ConfigSection<Config.Remount> {
  RemountSection() {
    super("remount");
    key("enabled", Types.bool());
    key("targetSize", Types.sizeOrPercent(1L << 20));
    key("maxSize", Types.sizeOrPercent(1L << 20));
    key("cooldown", Types.duration(Duration.ZERO, Duration.ofDays(7)));
  }

  @Override
  Config.Remount read(Values v) {
    return new Config.Remount(v.get("enabled"), v.get("targetSize"), v.get("maxSize"), v.get("cooldown"));
  }

  /**
   * Both in bytes or both in percent: compared here. One of each depends on the host's memory,
   * so the same file may be right on one host and not another; the remount policy caps the
   * target there, and says so when it does.
   */
  @Override
  void check(Values v) throws ConfigException {
    SizeSpec target = v.get("targetSize");
    SizeSpec max = v.get("maxSize");
    boolean sameKind = (target.percentOfRam() > 0) == (max.percentOfRam() > 0);
    if (sameKind && target.resolve(100) > max.resolve(100)) {
      throw v.broken("remount.targetSize", "remount.maxSize", target + " is above remount.maxSize (" + max
          + "), so every remount would be capped; allowed: a size no larger than remount.maxSize");
    }
  }
}
