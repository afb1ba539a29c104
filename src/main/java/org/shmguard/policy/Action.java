package org.shmguard.policy;

import java.util.Objects;
import org.shmguard.alert.Alert;
import org.shmguard.model.ShmMount;

/**
 * One thing the decide stage asks the act stage to do. Reaping is planned by {@link Judge} (its
 * {@link ReapPlan}) and carried out within the pass, since its last check must follow the
 * judgement at once; everything else a pass leads to is one of these, in a {@link Plan}.
 *
 * <pre>{@code
 * for (Action a : plan.actions()) actor.carry(a);
 * }</pre>
 */
public sealed interface Action {
  /** Tell operators: journald (or the log), counted in the metrics. */
  record Raise(Alert alert) implements Action {
    public Raise {
      Objects.requireNonNull(alert, "alert");
    }
  }

  /** Grow {@code mount} to the configured target, as {@link RemountPolicy} allows when it is carried out. */
  record Remount(ShmMount mount, String trigger) implements Action {
    public Remount {
      Objects.requireNonNull(mount, "mount");
      Objects.requireNonNull(trigger, "trigger");
    }
  }

  /** Publish advice drawn from {@code judgement}: the socket's answers from now on, and the advice file. */
  record Advise(Judgement judgement) implements Action {
    public Advise {
      Objects.requireNonNull(judgement, "judgement");
    }
  }
}
