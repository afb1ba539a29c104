package org.shmguard.metrics;

import java.time.Duration;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.model.ShmMount;
import org.shmguard.remedy.RemountOutcome;

/**
 * What the metrics count, as data: {@link MetricsOutputs} calls {@link #passCompleted} for every
 * pass's report (its judgement and reap outcomes), {@link #remounted(RemountOutcome)} for every
 * remount's outcome and {@link #alertRaised} for every alert the report carries; the advice socket
 * calls {@link #adviceAnswered}.
 *
 * <pre>{@code
 * PassReport pass = engine.clean(false);
 * sink.passCompleted(pass, Duration.ofNanos(System.nanoTime() - start));
 * }</pre>
 */
public interface MetricsSink {
  /**
   * One full pass: its judgement (mounts, verdicts, hidden bytes), its reap outcomes and how long
   * it took ({@code took} null when unknown).
   */
  void passCompleted(PassReport pass, Duration took);

  /**
   * An alert of {@code kind} (a journald SHMGUARD_EVENT such as capacity_critical) was raised
   * about {@code mount} (as the alert names it, null for one about the daemon itself) of
   * {@code container} (null for the host's).
   */
  default void alertRaised(String kind, String mount, String container) {
    alertRaised(kind, mount, container, null, null);
  }

  /**
   * As above, for an alert about a mount that is its owner's ({@code scope} "owner" and the
   * owner's uid, as the alert's SHM_SCOPE and SHM_OWNER_UID say); both null for the node's.
   */
  void alertRaised(String kind, String mount, String container, String scope, String ownerUid);

  /** The advice socket answered a caller about {@code mount} with {@code advice} (such as "none", "shm-disable"). */
  void adviceAnswered(String advice, ShmMount mount);

  /** A remount of {@code mount} of {@code container} ended with {@code result}: ok, refused or failed. */
  void remounted(String mount, String container, String result);

  /** What one remount came to (planned on the capacity path or asked for over the socket). */
  default void remounted(RemountOutcome o) {
    remounted(o.mount(), null, switch (o.result()) {
      case GROWN -> "ok";
      case REFUSED, UNNEEDED -> "refused";
      case FAILED -> "failed";
    });
  }

  /** A sink that records nothing, for the one-shot commands and a daemon with metrics off. */
  static MetricsSink none() {
    return new MetricsSink() {
      @Override
      public void passCompleted(PassReport pass, Duration took) {}

      @Override
      public void alertRaised(String kind, String mount, String container, String scope, String ownerUid) {}

      @Override
      public void adviceAnswered(String advice, ShmMount mount) {}

      @Override
      public void remounted(String mount, String container, String result) {}
    };
  }
}
