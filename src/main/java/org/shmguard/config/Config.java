package org.shmguard.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.shmguard.policy.Glob;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.SizeSpec;

/**
 * shmguard's whole configuration, validated and immutable. Obtain one from {@link ConfigLoader}.
 *
 * @param source where it came from: a file path, or "built-in defaults"
 */
public record Config(String source, List<String> mounts, Reap reap, Daemon daemon, Log log, Advice advice, Remount remount) {

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

  /** The advice socket and file (issue 4). */
  public record Advice(boolean enabled, Path socket, Path envFile, int defaultLocalRanks, int maxClients, Duration requestTimeout) {}

  /** Growing a tmpfs by remount (issue 4): off unless enabled. */
  public record Remount(boolean enabled, SizeSpec targetSize, SizeSpec maxSize, Duration cooldown) {}

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
        new Advice((Boolean) v.get("advice.enabled"), Path.of((String) v.get("advice.socket")),
            Path.of((String) v.get("advice.envFile")), (Integer) v.get("advice.defaultLocalRanks"),
            (Integer) v.get("advice.maxClients"), (Duration) v.get("advice.requestTimeout")),
        new Remount((Boolean) v.get("remount.enabled"), (SizeSpec) v.get("remount.targetSize"),
            (SizeSpec) v.get("remount.maxSize"), (Duration) v.get("remount.cooldown")));
  }
}
