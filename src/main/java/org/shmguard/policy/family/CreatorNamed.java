package org.shmguard.policy.family;

import java.time.Duration;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The common shape of a family whose file names carry their creator's pid and whose files are
 * handed on (a holder may drop one while its name is on the way to a receiver): holders having
 * exited proves nothing, the creator's pid does. Group 1 of {@link #name} is that pid, in the
 * creator's own PID namespace. Reaped by default only when the creator is provably dead in that
 * namespace (policy.CreatorEvidence), after a 5-minute grace, and never while it may live.
 */
abstract class CreatorNamed implements SegmentFamily {
  private final Pattern name;

  /** @param name the whole file name, with the creator's pid as group 1 */
  CreatorNamed(Pattern name) {
    this.name = name;
  }

  @Override
  public boolean holdersExitedMeansLeaked() {
    return false;
  }

  @Override
  public OptionalInt creatorPid(String fileName) {
    Matcher m = name.matcher(fileName);
    return m.matches() ? SegmentFamily.pid(m.group(1)) : OptionalInt.empty();
  }

  @Override
  public boolean namesItsCreator() {
    return true;
  }

  @Override
  public Duration defaultGrace() {
    return Duration.ofMinutes(5);
  }

  @Override
  public boolean reapedByDefault() {
    return false;
  }

  /** Whether the whole name has this family's shape. */
  final boolean named(String fileName) {
    return name.matcher(fileName).matches();
  }

  /**
   * On a volume whose every writer has exited, a file whose creator is provably dead has no
   * receiver left either: only the processes of the containers that mount it could open its name.
   */
  @Override
  public boolean reapedOnceWritersGone() {
    return true;
  }
}
