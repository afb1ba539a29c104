package org.shmguard.policy.family;

import java.time.Duration;
import java.util.Objects;

/**
 * What the configuration says about one family ({@code families.<name>.reap} and {@code .grace}).
 *
 * @param reap reap its leaked files even without a creator pid proven dead (never one whose creator
 *     may live: the judge keeps those whatever this says, and the configuration refuses true for
 *     families whose names give their creator)
 * @param grace how long an unheld file of it must be unchanged before it counts as leaked
 */
public record FamilySettings(boolean reap, Duration grace) {
  public FamilySettings {
    Objects.requireNonNull(grace, "grace");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("grace must not be negative: " + grace);
    }
  }

  /** A family's own defaults, as the shipped configuration spells them. */
  public static FamilySettings defaultsOf(SegmentFamily family) {
    return new FamilySettings(family.reapedByDefault(), family.defaultGrace());
  }
}
