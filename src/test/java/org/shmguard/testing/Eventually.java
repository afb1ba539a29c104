package org.shmguard.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits for a condition with a generous timeout, for "eventually" assertions on a loaded machine. */
public final class Eventually {
  private Eventually() {}

  public static void until(String what, Duration timeout, BooleanSupplier condition) {
    until(() -> what, timeout, condition);
  }

  public static void until(Supplier<String> what, Duration timeout, BooleanSupplier condition) {
    long end = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + timeout + ": " + what.get());
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted");
      }
    }
  }
}
