package org.shmguard.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
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
 */
public record Health(Status status, String line) {
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

  public Health {
    if (status == null || line == null || line.isBlank() || line.contains("\n")) {
      throw new IllegalArgumentException("status and a one-line message are required");
    }
  }

  public static Health unknown(String why) {
    return new Health(Status.UNKNOWN, "unknown: " + why.replace('\n', ' '));
  }

  public static Health of(Judgement j, int criticalPercent, boolean dryRun) {
    List<String> problems = new ArrayList<>();
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
        problems.add(m.displayName() + " " + percent(m) + "% full (critical " + criticalPercent + "%)");
      }
    }
    List<Assessment> leaked = j.segments().stream().filter(a -> a.verdict().reapable()).toList();
    boolean blocked = !j.plan().blockers().isEmpty();
    if (!leaked.isEmpty() && (blocked || dryRun)) {
      long bytes = leaked.stream().mapToLong(a -> a.segment().allocatedBytes()).sum();
      problems.add(leaked.size() + " leaked segment" + (leaked.size() == 1 ? "" : "s") + " (" + bytes
          + " bytes) shmguard may not reap: " + (blocked ? j.plan().blockers().get(0) : "reap.dryRun is true"));
    }
    if (!j.snapshot().complete()) {
      problems.add("incomplete /proc pass: " + j.snapshot().problems().get(0));
    }
    if (!problems.isEmpty()) {
      return new Health(Status.PROBLEM, String.join("; ", problems));
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
