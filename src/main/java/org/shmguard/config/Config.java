package org.shmguard.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.shmguard.policy.Glob;
import org.shmguard.policy.ReapPolicy;

/**
 * shmguard's whole configuration, validated and immutable. Obtain one from {@link ConfigLoader}.
 *
 * @param source where it came from: a file path, or "built-in defaults"
 */
public record Config(String source, List<String> mounts, Reap reap, Daemon daemon, Log log, Check check, Metrics metrics) {

  /** Whether "auto" discovery is on. */
  public boolean autoDiscover() {
    return mounts.contains("auto");
  }

  /** The mount points named explicitly. */
  public List<String> mountPaths() {
    return mounts.stream().filter(m -> !m.equals("auto")).toList();
  }

  public record Reap(boolean dryRun, Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace) {
    public ReapPolicy policy() {
      return new ReapPolicy(grace, patterns, deny, requireHostPidNamespace);
    }
  }

  public record Daemon(Duration interval) {}

  public record Log(String level) {}

  /** What {@code shmguard check} calls a problem. */
  public record Check(int criticalPercent) {}

  /**
   * Where metrics go.
   *
   * @param listen host:port of the HTTP endpoint, "" for none
   * @param textfile path of a node_exporter textfile, "" for none
   */
  public record Metrics(String listen, String textfile) {
    public boolean serves() {
      return !listen.isEmpty();
    }

    public boolean writesTextfile() {
      return !textfile.isEmpty();
    }
  }

  @SuppressWarnings("unchecked")
  static Config from(String source, Map<String, Object> v) {
    return new Config(
        source,
        (List<String>) v.get("mounts"),
        new Reap(
            (Boolean) v.get("reap.dryRun"),
            (Duration) v.get("reap.grace"),
            (List<Glob>) v.get("reap.patterns"),
            (List<Glob>) v.get("reap.deny"),
            (Boolean) v.get("reap.requireHostPidNamespace")),
        new Daemon((Duration) v.get("daemon.interval")),
        new Log((String) v.get("log.level")),
        new Check((Integer) v.get("check.criticalPercent")),
        new Metrics((String) v.get("metrics.listen"), (String) v.get("metrics.textfile")));
  }
}
