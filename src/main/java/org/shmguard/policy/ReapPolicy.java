package org.shmguard.policy;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.shmguard.model.Segment;
import org.shmguard.policy.family.FamilyRules;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.text.Glob;

/**
 * The rules the decide stage applies.
 *
 * @param grace how long an unheld segment must have been unchanged before it counts as leaked
 * @param patterns names shmguard may reap
 * @param deny names shmguard must never reap, whatever the patterns say
 * @param requireHostPidNamespace reap only when running in the host's PID namespace
 * @param families the segment families judged besides what the patterns allow, with their settings
 */
public record ReapPolicy(Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace,
    FamilyRules families) {
  /** What {@code LeasedUnlink} renames a file to while it holds the lease, and may leave behind. */
  public static final Glob STRANDED = Glob.of(".shmguard-reap-????????????????");
  /** The same, ending with "-" and the name the file was set aside from (wherever that fits in 255 bytes). */
  public static final Glob STRANDED_NAMED = Glob.of(".shmguard-reap-????????????????-?*");

  public ReapPolicy {
    Objects.requireNonNull(grace, "grace");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("grace must not be negative: " + grace);
    }
    patterns = List.copyOf(patterns);
    deny = List.copyOf(deny);
    Objects.requireNonNull(families, "families");
  }

  /** A policy that judges only what its patterns allow (no family is watched beyond them). */
  public ReapPolicy(Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace) {
    this(grace, patterns, deny, requireHostPidNamespace, FamilyRules.none());
  }

  /**
   * How long an unheld segment must stay unchanged before it counts as leaked. The one place a
   * grace is read: the judge applies it and the daemon's planner asks when it ends (see
   * {@link #graceLeft}), so a per-family grace is a change here alone.
   */
  public Duration graceFor(Segment segment) {
    FamilySettings settings = families.settings(families.familyOf(segment.nameText()));
    return settings != null ? settings.grace() : grace;
  }

  /** How long until a segment in its grace becomes reapable (zero if that is now), or null if it is not in its grace. */
  public Duration graceLeft(Assessment a) {
    if (a.verdict() != Verdict.GRACE) {
      return null;
    }
    Duration left = graceFor(a.segment()).minus(a.age());
    return left.isNegative() ? Duration.ZERO : left;
  }

  public Glob denying(String name) {
    for (Glob g : deny) {
      if (g.matches(name)) {
        return g;
      }
    }
    return null;
  }

  /**
   * Whether a file of this name is one the decide stage needs to see: a pattern allows it or a
   * watched family claims it, and no deny entry names it. Every other file can only ever be
   * ignored, so listings count it and keep nothing of it.
   */
  public boolean examines(String name) {
    return (allowing(name) != null || families.watches(name)) && denying(name) == null;
  }

  /**
   * Whether a file of this name may ever be reaped on {@code mount}, before its holders and age are
   * known: a pattern allows it, its family is reaped ({@code families.<name>.reap}), its name gives
   * its creator (reaped once that creator is provably dead), or its family is reaped once every
   * writer of a container's volume has exited and {@code mount} may be one ({@link WritersGone#possibleOn}).
   * The other names the decide stage judges it only ever reports: a listing gives them only the
   * places these leave, so that no crowd of them keeps a leak from being examined.
   */
  public boolean mayReap(org.shmguard.model.ShmMount mount, String name) {
    if (!examines(name)) {
      return false;
    }
    if (allowing(name) != null) {
      return true;
    }
    org.shmguard.policy.family.SegmentFamily family = families.familyOf(name);
    FamilySettings settings = families.settings(family);
    return settings != null && (settings.reap() || family.namesItsCreator()
        || (family.reapedOnceWritersGone() && WritersGone.possibleOn(mount)));
  }

  /**
   * The pattern that allows this name, or null. Besides the configured patterns, the names
   * shmguard's own last check gives a file while it holds the lease ({@code .shmguard-reap-}, 16
   * hex digits and maybe the file's own name) are always allowed: a file is left under one only when an opener raced the
   * reap and its old name was taken before it could be put back; it is judged like any other
   * (unheld, unchanged for the grace, the lease again), so it is not stranded for good. The deny
   * list still wins.
   */
  public Glob allowing(String name) {
    if (STRANDED.matches(name)) {
      return STRANDED;
    }
    if (STRANDED_NAMED.matches(name)) {
      return STRANDED_NAMED;
    }
    for (Glob g : patterns) {
      if (g.matches(name)) {
        return g;
      }
    }
    return null;
  }
}
