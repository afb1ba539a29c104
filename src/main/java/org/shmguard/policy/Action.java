package org.shmguard.policy;

import java.util.List;
import java.util.Objects;
import org.shmguard.alert.Alert;
import org.shmguard.model.ShmMount;

/**
 * One thing the decide stage asks for, in a {@link Plan}. A {@link Reap} comes first and is
 * carried out right after the judgement, with nothing between (in the daemon, on its pass
 * thread), then each {@link Remount}: the engine's act stage does both and reports their
 * outcomes. {@link Raise} and {@link Advise} are what the pass's report tells its outputs.
 *
 * <pre>{@code
 * PassReport report = engine.pass(false, false);   // carries out plan.actions() in order
 * }</pre>
 */
public sealed interface Action {
  /**
   * Reap {@code candidates}, the segments judged leaked in the pass: the act stage runs the
   * confirming /proc pass and, for each, the identity re-check and the lease before the unlink
   * (remedy's {@code Reaper}). With {@code dryRun} the same checks run and the lease is taken and
   * released; nothing is renamed or unlinked.
   */
  record Reap(List<Assessment> candidates, boolean dryRun) implements Action {
    public Reap {
      candidates = List.copyOf(candidates);
      if (candidates.isEmpty()) {
        throw new IllegalArgumentException("a reap needs at least one candidate");
      }
      for (Assessment a : candidates) {
        if (!a.verdict().reapable()) {
          throw new IllegalArgumentException(a.segment().displayName() + " is " + a.verdict() + ", not reapable");
        }
      }
    }
  }

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
