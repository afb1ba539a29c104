package org.shmguard.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.shmguard.host.RuntimeRoots;
import org.shmguard.policy.CapacityPolicy;
import org.shmguard.text.Glob;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.RemountPolicy;
import org.shmguard.text.SizeSpec;
import org.shmguard.policy.family.FamilyRules;

/**
 * shmguard's whole configuration, validated and immutable. Obtain one from {@link ConfigLoader}.
 *
 * @param source where it came from: a file path, or "built-in defaults"
 * @param runtimes where the runtimes mount pods' and containers' shm tmpfs on the host (the {@code runtimes} section)
 */
public record Config(String source, List<String> mounts, Reap reap, Daemon daemon, Log log, Capacity capacity,
    Advice advice, Remount remount, Metrics metrics, Namespaces namespaces, RuntimeRoots runtimes) {

  /** The same settings, said to come from {@code newSource}. */
  public Config withSource(String newSource) {
    return new Config(newSource, mounts, reap, daemon, log, capacity, advice, remount, metrics, namespaces, runtimes);
  }

  /** The same settings in a dry run (the daemon's and clean's --dry-run): reap.dryRun on. */
  public Config withDryRun() {
    return new Config(source, mounts, new Reap(true, reap.grace(), reap.patterns(), reap.deny(), reap.requireHostPidNamespace(),
        reap.examineLimit(), reap.examineTotal(), reap.families()), daemon, log, capacity, advice, remount, metrics, namespaces, runtimes);
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
   * @param examineLimit the most files a pass keeps per mount for judging: the oldest whose names a
   *     pattern allows or a watched segment family claims
   * @param examineTotal the most files a pass keeps over all mounts, shared out per mount (the
   *     host's and configured mounts first); each mount gets at most {@code examineLimit}
   * @param families the segment families beside NCCL and their settings (the {@code families} section)
   */
  public record Reap(boolean dryRun, Duration grace, List<Glob> patterns, List<Glob> deny, boolean requireHostPidNamespace,
      int examineLimit, int examineTotal, FamilyRules families) {
    public ReapPolicy policy() {
      return new ReapPolicy(grace, patterns, deny, requireHostPidNamespace, families);
    }
  }

  /**
   * The daemon's schedules and limits.
   *
   * @param interval the full sweep, the safety net under the event path
   * @param heartbeat how often each measured mount's statvfs is compared with the last full pass's
   *     (a change beyond a small threshold brings a full pass at once); no heartbeat when it is
   *     not shorter than {@code interval}
   * @param rediscover how often mounts are looked for (containers starting and stopping)
   * @param settle how long to let a burst of events gather before one pass handles them all
   * @param watchHolders at most this many holder processes watched for their exit (pidfds)
   * @param summary a Quartz cron expression for the journal summary, "" for none
   */
  public record Daemon(Duration interval, Duration heartbeat, Duration rediscover, Duration settle, int watchHolders, String summary) {}

  /** Capacity alerts: used percentages per mount, and how many holders of hidden bytes to name. */
  public record Capacity(int warn, int critical, int hysteresis, int topHolders) {
    public CapacityPolicy policy() {
      return new CapacityPolicy(warn, critical, hysteresis);
    }
  }

  public record Log(String level) {}

  /**
   * The advice socket and file (issue 4), and the socket's limits (issue 12): ordinary users share
   * {@code maxClients} connections, at most {@code maxClientsPerUser} each; root has
   * {@code rootClients} more; a connection must send something within {@code idleTimeout} and its
   * whole request line within {@code requestTimeout}.
   */
  public record Advice(boolean enabled, Path socket, Path envFile, int defaultLocalRanks, int maxClients,
      int maxClientsPerUser, int rootClients, Duration idleTimeout, Duration requestTimeout, int requestBurst,
      int requestsPerSecond) {}

  /** Growing a tmpfs by remount (issue 4): off unless enabled. */
  public record Remount(boolean enabled, SizeSpec targetSize, SizeSpec maxSize, Duration cooldown) {
    public RemountPolicy policy() {
      return new RemountPolicy(enabled, targetSize, maxSize, cooldown);
    }
  }

  /**
   * Which mount namespaces shmguard acts in (issue 12).
   *
   * @param actInUserNamespaces act (reap, remount) in a mount namespace that a user namespace
   *     other than the host's owns; false: report it only
   * @param reportLimit the most namespaces owned by other user namespaces whose mounts one pass
   *     reports (any user can make thousands): taken in turn from each user, the rest counted
   */
  public record Namespaces(boolean actInUserNamespaces, int reportLimit) {}

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
    ConfigPlace defaults = ConfigPlace.defaults(source);
    return from(source, v, key -> defaults);
  }

  /**
   * The rules between keys first ({@link CrossKeyRules}), then each section reads its part.
   *
   * @param placeOf the file and line a key was set on (for the errors of {@link CrossKeyRules})
   */
  static Config from(String source, Map<String, Object> v, Function<String, ConfigPlace> placeOf) throws ConfigException {
    CrossKeyRules.check(v, placeOf);
    return new Config(source, read(ConfigSchema.MOUNTS, source, v), read(ConfigSchema.REAP, source, v),
        read(ConfigSchema.DAEMON, source, v), read(ConfigSchema.LOG, source, v), read(ConfigSchema.CAPACITY, source, v),
        read(ConfigSchema.ADVICE, source, v), read(ConfigSchema.REMOUNT, source, v), read(ConfigSchema.METRICS, source, v),
        read(ConfigSchema.NAMESPACES, source, v), read(ConfigSchema.RUNTIMES, source, v));
  }

  private static <T> T read(ConfigSection<T> section, String source, Map<String, Object> v) {
    ConfigPlace defaults = ConfigPlace.defaults(source);
    return section.read(section.values(v, key -> defaults));
  }
}
