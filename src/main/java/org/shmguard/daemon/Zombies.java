package org.shmguard.daemon;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntPredicate;

/**
 * Holders whose pidfd said they exited but which /proc may still list, as zombies, until their
 * parent reaps them: while any is listed, {@link PassSchedule#zombies} brings passes with back-off,
 * for at most {@link #GIVE_UP_NANOS} after each exit. Pure: the clock comes in as nanoTime values.
 *
 * <pre>{@code
 * zombies.exited(pid, now);                                     // its pidfd fired
 * schedule.zombies(end, zombies.afterPass(snap::isAlive, end));  // after each full pass
 * }</pre>
 */
final class Zombies {
  /** How long a holder that exited is looked for again while /proc still lists it. */
  static final long GIVE_UP_NANOS = Duration.ofSeconds(30).toNanos();

  private final Map<Integer, Long> firstSeen = new HashMap<>();

  /** {@code pid}'s pidfd fired at {@code now}. */
  void exited(int pid, long now) {
    firstSeen.putIfAbsent(pid, now);
  }

  /**
   * After a pass at {@code now} that found the processes {@code listed} says: forgets every holder
   * no longer listed, and every one looked for since {@link #GIVE_UP_NANOS}. True while any is left.
   */
  boolean afterPass(IntPredicate listed, long now) {
    firstSeen.entrySet().removeIf(e -> !listed.test(e.getKey()) || now - e.getValue() > GIVE_UP_NANOS);
    return !firstSeen.isEmpty();
  }
}
