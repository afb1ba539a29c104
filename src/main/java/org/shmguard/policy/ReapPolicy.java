package org.shmguard.policy;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The rules the decide stage applies.
 *
 * @param grace how long an unheld segment must have been unchanged before it counts as leaked
 * @param patterns names shmguard may reap
 * @param deny names shmguard must never reap, whatever the patterns say
 * @param requireHostPidNamespace reap only when running in the host's PID namespace
 */
public record ReapPolicy(Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace) {
  public ReapPolicy {
    Objects.requireNonNull(grace, "grace");
    if (grace.isNegative()) {
      throw new IllegalArgumentException("grace must not be negative: " + grace);
    }
    patterns = List.copyOf(patterns);
    deny = List.copyOf(deny);
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
   * Whether a file of this name is one the decide stage needs to see: a pattern allows it and no
   * deny entry names it. Every other file can only ever be ignored, so listings count it and keep
   * nothing of it.
   */
  public boolean examines(String name) {
    return allowing(name) != null && denying(name) == null;
  }

  public Glob allowing(String name) {
    for (Glob g : patterns) {
      if (g.matches(name)) {
        return g;
      }
    }
    return null;
  }
}
