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
public record Config(String source, List<String> mounts, Reap reap, Daemon daemon, Log log, Capacity capacity,
    Advice advice, Remount remount, Metrics metrics, Namespaces namespaces) {

  /** The same settings, said to come from {@code newSource}. */
  public Config withSource(String newSource) {
    return new Config(newSource, mounts, reap, daemon, log, capacity, advice, remount, metrics, namespaces);
  }

  /** The same settings in a dry run (the daemon's and clean's --dry-run): reap.dryRun on. */
  public Config withDryRun() {
    return new Config(source, mounts, new Reap(true, reap.grace(), reap.patterns(), reap.deny(), reap.requireHostPidNamespace(),
        reap.examineLimit()), daemon, log, capacity, advice, remount, metrics, namespaces);
  }

  /** Whether "auto" discovery is on. */
  public boolean autoDiscover() {
    return mounts.contains("auto");
  }

  /** The mount points named explicitly. */
  public List<String> mountPaths() {
    return mounts.stream().filter(m -> !m.equals("auto")).toList();
  }

  /**
   * Reaping.
   *
   * @param examineLimit the most files a pass keeps per mount for judging: the oldest whose names a pattern allows
   */
  public record Reap(boolean dryRun, Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace,
      int examineLimit) {
    public ReapPolicy policy() {
      return new ReapPolicy(grace, patterns, deny, requireHostPidNamespace);
    }
  }

  /**
   * The daemon's schedules and limits.
   *
   * @param interval the full sweep, the safety net under the event path
   * @param rediscover how often mounts are looked for (containers starting and stopping)
   * @param settle how long to let a burst of events gather before one pass handles them all
   * @param watchHolders at most this many holder processes watched for their exit (pidfds)
   * @param summary a Quartz cron expression for the journal summary, "" for none
   */
  public record Daemon(Duration interval, Duration rediscover, Duration settle, int watchHolders, String summary) {}

  /** Capacity alerts: used percentages per mount, and how many holders of hidden bytes to name. */
  public record Capacity(int warn, int critical, int hysteresis, int topHolders) {}

  public record Log(String level) {}

  /**
   * The advice socket and file (issue 4), and the socket's limits (issue 12): ordinary users share
   * {@code maxClients} connections, at most {@code maxClientsPerUser} each; root has
   * {@code rootClients} more; a connection must send something within {@code idleTimeout} and its
   * whole request line within {@code requestTimeout}.
   */
  public record Advice(boolean enabled, Path socket, Path envFile, int defaultLocalRanks, int maxClients,
      int maxClientsPerUser, int rootClients, Duration idleTimeout, Duration requestTimeout) {}

  /** Growing a tmpfs by remount (issue 4): off unless enabled. */
  public record Remount(boolean enabled, SizeSpec targetSize, SizeSpec maxSize, Duration cooldown) {}

  /**
   * Which mount namespaces shmguard acts in (issue 12).
   *
   * @param actInUserNamespaces act (reap, remount) in a mount namespace that a user namespace
   *     other than the host's owns; false: report it only
   */
  public record Namespaces(boolean actInUserNamespaces) {}

  /**
   * Where metrics go (issue 5).
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

  static Config from(String source, Map<String, Object> v) throws ConfigException {
    return from(source, v, key -> 0);
  }

  /** @param lineOf the line a key was set on in the file, 0 for a default (for the errors of {@link CrossKeyRules}) */
  @SuppressWarnings("unchecked")
  static Config from(String source, Map<String, Object> v, java.util.function.ToIntFunction<String> lineOf) throws ConfigException {
    CrossKeyRules.check(source, v, lineOf);
    return new Config(
        source,
        (List<String>) v.get("mounts"),
        new Reap(
            (Boolean) v.get("reap.dryRun"),
            (Duration) v.get("reap.grace"),
            (List<Glob>) v.get("reap.patterns"),
            (List<Glob>) v.get("reap.deny"),
            (Boolean) v.get("reap.requireHostPidNamespace"),
            (Integer) v.get("reap.examineLimit")),
        new Daemon((Duration) v.get("daemon.interval"), (Duration) v.get("daemon.rediscover"),
            (Duration) v.get("daemon.settle"), (Integer) v.get("daemon.watchHolders"), (String) v.get("daemon.summary")),
        new Log((String) v.get("log.level")),
        new Capacity((Integer) v.get("capacity.warn"), (Integer) v.get("capacity.critical"),
            (Integer) v.get("capacity.hysteresis"), (Integer) v.get("capacity.topHolders")),
        new Advice((Boolean) v.get("advice.enabled"), Path.of((String) v.get("advice.socket")),
            Path.of((String) v.get("advice.envFile")), (Integer) v.get("advice.defaultLocalRanks"),
            (Integer) v.get("advice.maxClients"), (Integer) v.get("advice.maxClientsPerUser"),
            (Integer) v.get("advice.rootClients"), (Duration) v.get("advice.idleTimeout"),
            (Duration) v.get("advice.requestTimeout")),
        new Remount((Boolean) v.get("remount.enabled"), (SizeSpec) v.get("remount.targetSize"),
            (SizeSpec) v.get("remount.maxSize"), (Duration) v.get("remount.cooldown")),
        new Metrics((String) v.get("metrics.listen"), (String) v.get("metrics.textfile")),
        new Namespaces((Boolean) v.get("namespaces.actInUserNamespaces")));
  }
}
