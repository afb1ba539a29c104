package org.shmguard.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.shmguard.alert.Alert;
import org.shmguard.model.ShmMount;
import org.shmguard.text.Bytes;
import org.shmguard.text.Durations;
import org.shmguard.text.SizeSpec;

/**
 * Whether to grow a tmpfs, and to what size: off unless enabled, grow only, never below what is
 * used, never above the cap, at most once per cooldown per mount. Pure: the sizes, the memory
 * and the time come in.
 *
 * <pre>{@code
 * RemountPolicy.Decision d = policy.decide(size, used, null, ramBytes, lastRemount, now);
 * if (d.grow()) { ... remount to d.toBytes() ... }
 * }</pre>
 */
public record RemountPolicy(boolean enabled, SizeSpec target, SizeSpec max, Duration cooldown) {
  /** tmpfs sizes are whole pages; sizes are rounded down to this so the cap holds. */
  public static final long PAGE = 4096;
  /** Why nothing is grown while remounting is off: in the refusal, and in the events that would have grown a mount. */
  public static final String OFF = "remounting is off (remount.enabled: false)";

  public RemountPolicy {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(max, "max");
    Objects.requireNonNull(cooldown, "cooldown");
  }

  /**
   * Whether a change of capacity level calls for a remount: remounting is on and the mount has just
   * become critical. Once per entry into critical; leaving it takes the capacity hysteresis.
   */
  public boolean triggeredBy(CapacityWatch.Change change) {
    return enabled && change.to() == CapacityLevel.CRITICAL && change.from() != CapacityLevel.CRITICAL;
  }

  /**
   * {@code a}, an event that would have grown mount {@code m} (it became critical, or an NCCL
   * allocation failed there), as it goes out: while remounting is off it says it was not grown and
   * why, in its message (before the pod or container it names, which stays last) and in
   * SHM_REMOUNT; while remounting is on, unchanged.
   */
  public Alert noteOn(Alert a, ShmMount m) {
    if (enabled) {
      return a;
    }
    String tag = m == null || m.workload() == null ? "" : " [" + m.workload().describe() + "]";
    String msg = a.message();
    int at = !tag.isEmpty() && msg.endsWith(tag) ? msg.length() - tag.length() : msg.length();
    return new Alert(a.kind(), msg.substring(0, at) + "; not grown: " + OFF + msg.substring(at), a.fields(), a.priority())
        .with("SHM_REMOUNT", OFF);
  }

  /** Grow from {@code fromBytes} to {@code toBytes}, or not, and why in words. */
  public record Decision(boolean grow, long fromBytes, long toBytes, String reason) {}

  /**
   * @param requested bytes root asked for, or null for the configured target
   * @param lastRemount when this mount was last remounted (or tried), or null
   */
  public Decision decide(long sizeBytes, long usedBytes, Long requested, long ramBytes, Instant lastRemount, Instant now) {
    if (!enabled) {
      return new Decision(false, sizeBytes, sizeBytes, OFF);
    }
    if (lastRemount != null && now.isBefore(lastRemount.plus(cooldown))) {
      return new Decision(false, sizeBytes, sizeBytes, "it was remounted " + Durations.human(Duration.between(lastRemount, now))
          + " ago; remount.cooldown is " + Durations.human(cooldown));
    }
    long cap = max.resolve(ramBytes) / PAGE * PAGE;
    long want = requested != null ? requested : target.resolve(ramBytes);
    String capped = "";
    if (want > cap) {
      capped = " (capped from " + Bytes.human(want) + " by remount.maxSize " + max + ")";
      want = cap;
    }
    want = want / PAGE * PAGE;
    if (want <= sizeBytes) {
      return new Decision(false, sizeBytes, sizeBytes, "a remount only grows: " + Bytes.human(want) + capped
          + " is not above the current size " + Bytes.human(sizeBytes));
    }
    if (want < usedBytes) {
      return new Decision(false, sizeBytes, sizeBytes, Bytes.human(want) + " is below the " + Bytes.human(usedBytes) + " in use");
    }
    return new Decision(true, sizeBytes, want, "grow from " + Bytes.human(sizeBytes) + " to " + Bytes.human(want) + capped);
  }
}
