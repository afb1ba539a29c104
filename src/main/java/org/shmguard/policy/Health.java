package org.shmguard.policy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.shmguard.model.ShmMount;
import org.shmguard.text.Bytes;

/**
 * The host's shm health in one status and one short line, for {@code shmguard check} and
 * node-problem-detector. A problem is a mount at or over the critical fill, leaked segments that
 * shmguard may not reap (the plan is blocked, or reaping is a dry run), or a /proc pass that could
 * not read every process. Only the node's mounts count ({@link HealthScope}): a mount shmguard only
 * reports is its owner's, and what is found there (past the critical fill, leaked segments) is
 * said under the owner's uid, after the node's findings, and never makes the verdict a problem or
 * unknown. Pure: a function of the judgement and the threshold.
 *
 * <pre>{@code
 * Health h = Health.of(engine.judge(), 90, config.reap().dryRun());
 * out.println(h.line());
 * }</pre>
 *
 * @param line one line, most important finding first (node-problem-detector cuts long output)
 * @param problems each kind of problem found, with its own line: what a monitor maps to a
 *     condition of its own (node-problem-detector's ShmFull, ShmLeak, ShmguardDown)
 * @param owners the same findings in mounts that are their owners' (FULL and LEAK only), each
 *     with its own line naming the owner's uid: shown, never a problem
 */
public record Health(Status status, String line, Map<Problem, String> problems, Map<Problem, String> owners) {
  /** How many mounts of their owners' a line names; the rest are counted. */
  static final int OWNERS_SHOWN = 3;

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
    if (status == null || line == null || line.isBlank() || line.contains("\n") || problems == null || owners == null) {
      throw new IllegalArgumentException("status, a one-line message, the problems and the owners' findings (maybe none) are required");
    }
    problems = problems.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(problems));
    owners = owners.isEmpty() ? Map.of() : Collections.unmodifiableMap(new EnumMap<>(owners));
  }

  public Health(Status status, String line) {
    this(status, line, Map.of(), Map.of());
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
    Map<Problem, String> owners = new EnumMap<>(Problem.class);
    List<String> full = new ArrayList<>();
    List<String> ownersFull = new ArrayList<>();
    List<String> unmeasured = new ArrayList<>();
    ShmMount fullest = null;
    int nodeMounts = 0;
    for (ShmMount m : j.snapshot().mounts()) {
      boolean node = HealthScope.of(m) == HealthScope.NODE;
      nodeMounts += node ? 1 : 0;
      if (m.usage() == null) {
        if (node) {
          unmeasured.add(m.displayName());
        }
        continue;
      }
      if (node && (fullest == null || m.usage().usedFraction() > fullest.usage().usedFraction())) {
        fullest = m;
      }
      if (percent(m) >= criticalPercent) {
        String text = m.displayName() + " " + percent(m) + "% full (critical " + criticalPercent + "%)";
        if (node) {
          full.add(text);
        } else {
          ownersFull.add(HealthScope.whose(m) + " " + text);
        }
      }
    }
    if (!full.isEmpty()) {
      problems.put(Problem.FULL, String.join("; ", full));
    }
    if (!ownersFull.isEmpty()) {
      owners.put(Problem.FULL, shown(ownersFull));
    }
    List<Assessment> leaked = new ArrayList<>();
    Map<ShmMount, List<Assessment>> ownersLeaked = new LinkedHashMap<>();
    for (Assessment a : j.segments()) {
      if (a.verdict().reapable()) {
        if (HealthScope.of(a.mount()) == HealthScope.NODE) {
          leaked.add(a);
        } else {
          ownersLeaked.computeIfAbsent(a.mount(), m -> new ArrayList<>()).add(a);
        }
      }
    }
    boolean blocked = !j.plan().blockers().isEmpty();
    if (!leaked.isEmpty() && (blocked || dryRun)) {
      problems.put(Problem.LEAK, leakedText(leaked) + " shmguard may not reap: "
          + (blocked ? j.plan().blockers().get(0) : "reap.dryRun is true"));
    }
    if (!ownersLeaked.isEmpty()) {
      List<String> texts = new ArrayList<>();
      ownersLeaked.forEach((m, list) -> texts.add(HealthScope.whose(m) + " " + m.displayName() + ": " + leakedText(list)
          + " shmguard only reports"));
      owners.put(Problem.LEAK, shown(texts));
    }
    if (!j.snapshot().complete()) {
      problems.put(Problem.BLIND, "incomplete /proc pass: " + j.snapshot().problems().get(0));
    }
    String theirs = owners.isEmpty() ? "" : "; not the node's: " + String.join("; ", owners.values());
    if (!problems.isEmpty()) {
      return new Health(Status.PROBLEM, String.join("; ", problems.values()) + theirs, problems, owners);
    }
    if (!unmeasured.isEmpty()) {
      return new Health(Status.UNKNOWN, "unknown: cannot measure " + String.join(", ", unmeasured) + theirs, Map.of(), owners);
    }
    if (fullest == null) {
      // no mount of the node's (an unmeasured one returned above): any mount left is an owner's
      return new Health(Status.OK, (nodeMounts < j.snapshot().mounts().size() ? "ok: no shm tmpfs of the node's to watch"
          : "ok: no shm tmpfs to watch") + theirs, Map.of(), owners);
    }
    return new Health(Status.OK, String.format(Locale.ROOT, "ok: %d mount%s, fullest %s %d%% (critical %d%%), %d leaked",
        nodeMounts, nodeMounts == 1 ? "" : "s", fullest.displayName(), percent(fullest),
        criticalPercent, leaked.size()) + theirs, Map.of(), owners);
  }

  /**
   * The first {@value #OWNERS_SHOWN} of the owners' findings and how many more: any user can make
   * a thousand namespaces, and the answer must stay one short line that fits every client's reply
   * limit, whatever they do.
   */
  private static String shown(List<String> findings) {
    String first = String.join("; ", findings.subList(0, Math.min(OWNERS_SHOWN, findings.size())));
    int more = findings.size() - OWNERS_SHOWN;
    return more > 0 ? first + "; and " + more + " more" : first;
  }

  /** "2 leaked segments (8192 bytes)". */
  private static String leakedText(List<Assessment> leaked) {
    long bytes = leaked.stream().mapToLong(a -> a.segment().allocatedBytes()).sum();
    return leaked.size() + " leaked segment" + (leaked.size() == 1 ? "" : "s") + " (" + Bytes.human(bytes) + ")";
  }

  private static int percent(ShmMount m) {
    return (int) Math.floor(m.usage().usedFraction() * 100);
  }
}
