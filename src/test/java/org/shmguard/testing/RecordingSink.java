package org.shmguard.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;

/** An alert sink that keeps every alert with the moment it arrived, for tests to wait on. */
public final class RecordingSink implements AlertSink {
  /** One alert and System.nanoTime() when it was emitted. */
  public record Received(Alert alert, long nanoTime) {}

  private final List<Received> received = new ArrayList<>();

  @Override
  public synchronized void emit(Alert alert) {
    received.add(new Received(alert, System.nanoTime()));
    notifyAll();
  }

  @Override
  public String describe() {
    return "alerts go to a test's memory";
  }

  public synchronized List<Alert> all() {
    return received.stream().map(Received::alert).toList();
  }

  public synchronized List<Alert> of(EventKind kind) {
    return received.stream().map(Received::alert).filter(a -> a.kind() == kind).toList();
  }

  /** Waits for the first alert matching {@code test}; fails after {@code timeout}. */
  public synchronized Received await(Predicate<Alert> test, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    while (true) {
      for (Received r : received) {
        if (test.test(r.alert())) {
          return r;
        }
      }
      long left = end - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError("no matching alert within " + timeout + "; got " + all());
      }
      try {
        wait(Math.max(1, left / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted");
      }
    }
  }

  /** Waits for an alert of {@code kind} about segment {@code name}. */
  public Received awaitSegment(EventKind kind, String name, Duration timeout) {
    return await(a -> a.kind() == kind && name.equals(a.field("SHM_SEGMENT")), timeout);
  }
}
