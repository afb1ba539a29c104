package org.shmguard.doctor;

import java.util.List;
import org.shmguard.policy.Judgement;

/**
 * The seam where the advice engine (issue 4) plugs into the doctor: what the daemon's advice
 * socket would answer right now, per mount, computed from the same judgement the doctor checked.
 * {@link #forDoctor} is the one place to connect it; until then it returns {@link #NOT_WIRED},
 * which answers nothing, and the doctor says so in a note.
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

  /**
   * The advice source {@code shmguard doctor} uses. Issue 4 (the advice engine and socket) plugs
   * its engine in here, built from the same configuration; this build has none to offer.
   */
  static AdviceSource forDoctor(org.shmguard.config.Config config) {
    return NOT_WIRED;
  }

  /** False only for the placeholder. */
  default boolean wired() {
    return true;
  }
}
