package org.shmguard.metrics;

import java.time.Duration;
import org.shmguard.engine.Engine;
import org.shmguard.model.ShmMount;

/**
 * Where the daemon reports what it saw and did, for metrics. The daemon calls
 * {@link #passCompleted} after every observe, decide, act pass; the alert, advice and remount
 * code call the others as those things happen.
 *
 * <pre>{@code
 * Engine.Pass pass = engine.clean(false);
 * sink.passCompleted(pass, Duration.ofNanos(System.nanoTime() - start));
 * }</pre>
 */
public interface MetricsSink {
  /** One full pass: its judgement (mounts, verdicts, hidden bytes), its reap outcomes and how long it took. */
  void passCompleted(Engine.Pass pass, Duration took);

  /** An alert was raised about {@code mount} (null for one about the daemon itself). */
  void alertRaised(String kind, ShmMount mount);

  /** The advice socket answered a caller about {@code mount} with {@code advice} (such as "none", "shm-disable"). */
  void adviceAnswered(String advice, ShmMount mount);

  /** A remount of {@code mount} was tried. */
  void remounted(ShmMount mount, boolean succeeded);

  /** A sink that records nothing, for the one-shot commands and a daemon with metrics off. */
  static MetricsSink none() {
    return new MetricsSink() {
      @Override
      public void passCompleted(Engine.Pass pass, Duration took) {}

      @Override
      public void alertRaised(String kind, ShmMount mount) {}

      @Override
      public void adviceAnswered(String advice, ShmMount mount) {}

      @Override
      public void remounted(ShmMount mount, boolean succeeded) {}
    };
  }
}
