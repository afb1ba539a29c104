package org.shmguard.policy.family;

import java.time.Duration;

/**
 * The common shape of a family whose files are held by the processes that use them for as long
 * as they are useful, and are removed by a launcher or server that may die too: every holder
 * having exited means leaked. Reported by default, reaped when {@code families.<name>.reap} is
 * on (or a {@code reap.patterns} entry names them), and on a volume whose every writer has exited.
 */
abstract class HeldForLife implements SegmentFamily {
  @Override
  public boolean holdersExitedMeansLeaked() {
    return true;
  }

  @Override
  public Duration defaultGrace() {
    return Duration.ofMinutes(10);
  }

  @Override
  public boolean reapedByDefault() {
    return false;
  }

  /**
   * Its files are held by every process that uses them for as long as they are useful: on a volume
   * that no process holds anything on, nothing is using one, and no user of it is left to open it.
   */
  @Override
  public boolean reapedOnceWritersGone() {
    return true;
  }
}
