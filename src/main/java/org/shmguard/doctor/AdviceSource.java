package org.shmguard.doctor;

import java.util.List;
import org.shmguard.policy.Judgement;

/**
 * The seam where the advice engine (issue 4) plugs into the doctor: what the daemon's advice
 * socket would answer right now, per mount, computed from the same judgement the doctor checked.
 * Until the engine is wired in, {@link #NOT_WIRED} answers nothing and the doctor says so.
 *
 * <pre>{@code
 * AdviceSource engine = judgement -> List.of(new AdviceSource.Advice("/dev/shm", "NCCL_SHM_DISABLE=1", "64M left"));
 * }</pre>
 */
@FunctionalInterface
public interface AdviceSource {
  /** One piece of advice: for which mount, the KEY=VALUE a launch wrapper would export, and why. */
  record Advice(String mount, String setting, String reason) {}

  List<Advice> currentAdvice(Judgement judgement);

  /** Placeholder until the advice engine is merged: no advice, and {@link #wired()} is false. */
  AdviceSource NOT_WIRED = new AdviceSource() {
    @Override
    public List<Advice> currentAdvice(Judgement judgement) {
      return List.of();
    }

    @Override
    public boolean wired() {
      return false;
    }
  };

  /** False only for the placeholder. */
  default boolean wired() {
    return true;
  }
}
