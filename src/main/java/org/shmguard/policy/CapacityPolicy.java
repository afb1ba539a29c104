package org.shmguard.policy;

/**
 * Capacity thresholds with hysteresis: a level is entered at its threshold and left only when
 * usage falls {@code hysteresis} points below it, so a mount hovering at 80% raises one alert,
 * not one per pass.
 *
 * <pre>{@code
 * CapacityPolicy p = new CapacityPolicy(80, 95, 5);
 * p.next(CapacityLevel.WARNING, 77.0);   // still WARNING: not below 75
 * }</pre>
 */
public record CapacityPolicy(int warnPercent, int criticalPercent, int hysteresisPercent) {
  public CapacityPolicy {
    if (warnPercent < 1 || criticalPercent > 100 || criticalPercent <= warnPercent) {
      throw new IllegalArgumentException("thresholds need 1 <= warn < critical <= 100, got warn " + warnPercent
          + ", critical " + criticalPercent);
    }
    if (hysteresisPercent < 0 || hysteresisPercent >= warnPercent) {
      throw new IllegalArgumentException("hysteresis must lie in [0, warn), got " + hysteresisPercent);
    }
  }

  /** The level after a pass that measured {@code usedPercent}, given the level before it. */
  public CapacityLevel next(CapacityLevel previous, double usedPercent) {
    if (usedPercent >= criticalPercent) {
      return CapacityLevel.CRITICAL;
    }
    if (previous == CapacityLevel.CRITICAL && usedPercent >= criticalPercent - hysteresisPercent) {
      return CapacityLevel.CRITICAL;
    }
    if (usedPercent >= warnPercent) {
      return CapacityLevel.WARNING;
    }
    if (previous != CapacityLevel.OK && usedPercent >= warnPercent - hysteresisPercent) {
      return CapacityLevel.WARNING;
    }
    return CapacityLevel.OK;
  }
}
