package org.shmguard.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;
import org.shmguard.policy.Durations;
import org.shmguard.policy.Glob;
import org.shmguard.policy.SizeSpec;

/**
 * The rules that tie keys to each other, checked once every key has its value (the file's over
 * the defaults). Each error names the key that breaks the rule and the later of the two lines,
 * since the key set last is usually the one just edited.
 */
final class CrossKeyRules {
  private final String source;
  private final Map<String, Object> values;
  private final ToIntFunction<String> lineOf;

  private CrossKeyRules(String source, Map<String, Object> values, ToIntFunction<String> lineOf) {
    this.source = source;
    this.values = values;
    this.lineOf = lineOf;
  }

  /** @param lineOf the line a key was set on in the file, 0 for a default */
  static void check(String source, Map<String, Object> values, ToIntFunction<String> lineOf) throws ConfigException {
    CrossKeyRules r = new CrossKeyRules(source, values, lineOf);
    List<ConfigException> errors = new java.util.ArrayList<>();
    for (Rule rule : new Rule[] {r::capacityThresholdsInOrder, r::remountTargetWithinCap, r::settleShorterThanSweep,
        r::patternsNotDenied, r::filesRootWritesAreDistinct}) {
      try {
        rule.check();
      } catch (ConfigException e) {
        errors.add(e); // each rule is checked: the operator hears of every broken one at once
      }
    }
    if (!errors.isEmpty()) {
      throw ConfigException.all(errors);
    }
  }

  private interface Rule {
    void check() throws ConfigException;
  }

  private void capacityThresholdsInOrder() throws ConfigException {
    int warn = (Integer) values.get("capacity.warn");
    int critical = (Integer) values.get("capacity.critical");
    int hysteresis = (Integer) values.get("capacity.hysteresis");
    if (critical <= warn) {
      throw broken("capacity.critical", "capacity.warn", critical + " must be above capacity.warn (" + warn
          + "); allowed: a whole number from " + (warn + 1) + " to 100");
    }
    if (hysteresis >= warn) {
      throw broken("capacity.hysteresis", "capacity.warn", hysteresis + " must be below capacity.warn (" + warn
          + "); allowed: a whole number from 0 to " + Math.min(warn - 1, 50));
    }
  }

  /**
   * Both in bytes or both in percent: compared here. One of each depends on the host's memory,
   * so the same file may be right on one host and not another; the remount policy caps the
   * target there, and says so when it does.
   */
  private void remountTargetWithinCap() throws ConfigException {
    SizeSpec target = (SizeSpec) values.get("remount.targetSize");
    SizeSpec max = (SizeSpec) values.get("remount.maxSize");
    boolean sameKind = (target.percentOfRam() > 0) == (max.percentOfRam() > 0);
    if (sameKind && target.resolve(100) > max.resolve(100)) {
      throw broken("remount.targetSize", "remount.maxSize", target + " is above remount.maxSize (" + max
          + "), so every remount would be capped; allowed: a size no larger than remount.maxSize");
    }
  }

  private void settleShorterThanSweep() throws ConfigException {
    Duration settle = (Duration) values.get("daemon.settle");
    Duration interval = (Duration) values.get("daemon.interval");
    if (settle.compareTo(interval) >= 0) {
      throw broken("daemon.settle", "daemon.interval", Durations.human(settle) + " is not shorter than daemon.interval ("
          + Durations.human(interval) + "): events would wait longer than the full sweep; allowed: a duration below daemon.interval");
    }
  }

  @SuppressWarnings("unchecked")
  private void patternsNotDenied() throws ConfigException {
    List<Glob> deny = (List<Glob>) values.get("reap.deny");
    for (Glob pattern : (List<Glob>) values.get("reap.patterns")) {
      if (deny.contains(pattern)) {
        throw broken("reap.patterns", "reap.deny", "\"" + pattern + "\" is also in reap.deny, so it would never reap anything; "
            + "allowed: patterns that reap.deny does not list");
      }
    }
  }

  /** The socket, the advice file and the textfile are files root creates and replaces: one must not clobber another. */
  private void filesRootWritesAreDistinct() throws ConfigException {
    String socket = (String) values.get("advice.socket");
    String envFile = (String) values.get("advice.envFile");
    String textfile = (String) values.get("metrics.textfile");
    if (envFile.equals(socket)) {
      throw broken("advice.envFile", "advice.socket", "is the same path as advice.socket; allowed: a path of its own");
    }
    if (textfile.equals(socket) || textfile.equals(envFile)) {
      String other = textfile.equals(socket) ? "advice.socket" : "advice.envFile";
      throw broken("metrics.textfile", other, "is the same path as " + other + "; allowed: a path of its own");
    }
  }

  private ConfigException broken(String key, String otherKey, String message) {
    return new ConfigException(source, Math.max(lineOf.applyAsInt(key), lineOf.applyAsInt(otherKey)), key, message);
  }
}
