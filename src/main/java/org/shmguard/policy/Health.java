package org.shmguard.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.shmguard.model.ShmMount;

/**
 * The host's shm health in one status and one short line, for {@code shmguard check} and
 * node-problem-detector. A problem is a mount at or over the critical fill, leaked segments that
 * shmguard may not reap (the plan is blocked, or reaping is a dry run), or a /proc pass that could
 * not read every process. Pure: a function of the judgement and the threshold.
 *
 * <pre>{@code
 * Health h = Health.of(engine.judge(), 90, config.reap().dryRun());
 * out.println(h.line());
 * }</pre>
 *
 * @param line one line, most important finding first (node-problem-detector cuts long output)
 * @param problems each kind of problem found, with its own line: what a monitor maps to a
 *     condition of its own (node-problem-detector's ShmFull, ShmLeak, ShmguardDown)
 */
public record Health(Status status, String line, Map<Problem, String> problems) {
  /** node-problem-detector's plugin protocol: 0 OK, 1 a problem, 2 unknown. */
  public enum Status {
    OK(0), PROBLEM(1), UNKNOWN(2);

    private final int exitCode;

    Status(int exitCode) {
      this.exitCode = exitCode;
    }

    public int exitCode() {
      return exitCode;
    }
  }

  /** The kinds of problem, in the order the line names them. */
  public enum Problem {
    /** A mount at or over the critical fill. */
    FULL,
    /** Leaked segments shmguard may not reap. */
    LEAK,
    /** A /proc pass that could not read every process: nothing is reaped on its evidence. */
    BLIND
  }

  public Health {
    if (status == null || line == null || line.isBlank() || line.contains("\n") || problems == null) {
      throw new IllegalArgumentException("status, a one-line message and the problems (maybe none) are required");
    }
    problems = problems.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(problems));
  }

  public Health(Status status, String line) {
    this(status, line, Map.of());
  }

  /**
   * How long after its last pass a daemon counts as stuck, and its view of the host as stale:
   * twice the pass interval and a minute, so that slow passes on a loaded host are not failures.
   */
  public static Duration staleAfter(Duration interval) {
    return interval.multipliedBy(2).plusMinutes(1);
  }

  public static Health unknown(String why) {
    return new Health(Status.UNKNOWN, "unknown: " + why.replace('\n', ' '));
  }

  public static Health of(Judgement j, int criticalPercent, boolean dryRun) {
    Map<Problem, String> problems = new EnumMap<>(Problem.class);
    List<String> full = new ArrayList<>();
    List<String> unmeasured = new ArrayList<>();
    ShmMount fullest = null;
    for (ShmMount m : j.snapshot().mounts()) {
      if (m.usage() == null) {
        unmeasured.add(m.displayName());
        continue;
      }
      if (fullest == null || m.usage().usedFraction() > fullest.usage().usedFraction()) {
        fullest = m;
      }
      if (percent(m) >= criticalPercent) {
        full.add(m.displayName() + " " + percent(m) + "% full (critical " + criticalPercent + "%)");
      }
    }
    if (!full.isEmpty()) {
      problems.put(Problem.FULL, String.join("; ", full));
    }
    List<Assessment> leaked = j.segments().stream().filter(a -> a.verdict().reapable()).toList();
    boolean blocked = !j.plan().blockers().isEmpty();
    if (!leaked.isEmpty() && (blocked || dryRun)) {
      long bytes = leaked.stream().mapToLong(a -> a.segment().allocatedBytes()).sum();
      problems.put(Problem.LEAK, leaked.size() + " leaked segment" + (leaked.size() == 1 ? "" : "s") + " ("
          + Bytes.human(bytes) + ") shmguard may not reap: " + (blocked ? j.plan().blockers().get(0) : "reap.dryRun is true"));
    }
    if (!j.snapshot().complete()) {
      problems.put(Problem.BLIND, "incomplete /proc pass: " + j.snapshot().problems().get(0));
    }
    if (!problems.isEmpty()) {
      return new Health(Status.PROBLEM, String.join("; ", problems.values()), problems);
    }
    if (!unmeasured.isEmpty()) {
      return unknown("cannot measure " + String.join(", ", unmeasured));
    }
    if (fullest == null) {
      return new Health(Status.OK, "ok: no shm tmpfs to watch");
    }
    return new Health(Status.OK, String.format(Locale.ROOT, "ok: %d mount%s, fullest %s %d%% (critical %d%%), %d leaked",
        j.mounts().size(), j.mounts().size() == 1 ? "" : "s", fullest.displayName(), percent(fullest),
        criticalPercent, leaked.size()));
  }

  private static int percent(ShmMount m) {
    return (int) Math.floor(m.usage().usedFraction() * 100);
  }
}
