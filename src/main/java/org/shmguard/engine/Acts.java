package org.shmguard.engine;

import java.util.List;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.Action;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.remedy.Reaper;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.remedy.Remounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's {@link Actor}: reaps through the {@link Reaper} (the same code for the one-shot
 * {@code clean} and the daemon), an exit pass's reap through a {@link Reaper} whose confirming
 * pass reads fd tables only, grows mounts through the {@link Remounter}, or, without one (the
 * one-shot commands, a daemon started as tests start one), grows nothing.
 *
 * @param exitReaper the exit pass's: {@code HolderConfirmer.fdTables}, the write lease answering for mappings
 * @param remounter null for none
 */
public record Acts(Reaper reaper, Reaper exitReaper, Remounter remounter) implements Actor {
  private static final Logger LOG = LoggerFactory.getLogger(Acts.class);

  public Acts {
    java.util.Objects.requireNonNull(reaper, "reaper");
    java.util.Objects.requireNonNull(exitReaper, "exitReaper");
  }

  @Override
  public List<ReapOutcome> reap(Action.Reap reap) {
    return reaper.carry(reap);
  }

  @Override
  public List<ReapOutcome> reapOnExit(Action.Reap reap) {
    return exitReaper.carry(reap);
  }

  @Override
  public RemountOutcome remount(ShmMount mount, Long sizeBytes, String trigger) {
    if (remounter == null) {
      LOG.debug("no remounter: {} is not grown ({})", mount.displayName(), trigger);
      return null;
    }
    return remounter.grow(mount, sizeBytes, trigger);
  }

  /** The same, reaping with {@code fresh}'s reapers (a reloaded configuration) and remounting as before. */
  Acts reapingWith(Acts fresh) {
    return new Acts(fresh.reaper, fresh.exitReaper, remounter);
  }
}
