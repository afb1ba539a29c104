package org.shmguard.testing;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.shmguard.advice.ProtocolException;

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

  /** A step that fails while what it asks is still starting. */
  public interface Attempt<T> {
    T get() throws Exception;
  }

  /**
   * Tries {@code attempt} until it returns, again every 100 ms while it throws an IOException or the
   * advice protocol's ProtocolException, for a generous minute: a daemon starting on a loaded machine.
   */
  public static <T> T answered(Attempt<T> attempt) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        return attempt.get();
      } catch (IOException | ProtocolException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }
}
