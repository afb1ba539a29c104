package org.shmguard.config;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every configuration key, by dotted path, with the kind of value it takes. A key not listed
 * here is an error; every key listed here must have its default in the shipped config/shmguard.yaml.
 */
final class ConfigSchema {
  static final Map<String, ValueType<?>> KEYS = build();

  private ConfigSchema() {}

  private static Map<String, ValueType<?>> build() {
    Map<String, ValueType<?>> k = new LinkedHashMap<>();
    k.put("mounts", Types.mounts());
    k.put("reap.dryRun", Types.bool());
    k.put("reap.grace", Types.duration(Duration.ZERO, Duration.ofDays(30)));
    k.put("reap.patterns", Types.reapPatterns());
    k.put("reap.deny", Types.globs());
    k.put("reap.requireHostPidNamespace", Types.bool());
    k.put("reap.examineLimit", Types.integer(1, 1_000_000)); // memory bound per mount (issue 12)
    k.put("daemon.interval", Types.duration(Duration.ofMillis(100), Duration.ofDays(1)));
    k.put("daemon.rediscover", Types.duration(Duration.ofMillis(100), Duration.ofHours(1)));
    k.put("daemon.settle", Types.duration(Duration.ZERO, Duration.ofSeconds(10)));
    k.put("daemon.watchHolders", Types.integer(0, 65_536));
    k.put("daemon.summary", Types.cron());
    k.put("capacity.warn", Types.integer(1, 100));
    k.put("capacity.critical", Types.integer(1, 100));
    k.put("capacity.hysteresis", Types.integer(0, 50));
    k.put("capacity.topHolders", Types.integer(0, 100));
    k.put("log.level", Types.oneOf("error", "warn", "info", "debug"));
    // advice: the socket, advice.env and the defaults of the advice engine (issue 4)
    k.put("advice.enabled", Types.bool());
    k.put("advice.socket", PathTypes.socketPath());
    k.put("advice.envFile", PathTypes.absolutePath());
    k.put("advice.defaultLocalRanks", Types.integer(1, 1024));
    k.put("advice.maxClients", Types.integer(1, 1024));
    k.put("advice.maxClientsPerUser", Types.integer(1, 1024));
    k.put("advice.rootClients", Types.integer(1, 1024));
    k.put("advice.idleTimeout", Types.duration(Duration.ofMillis(100), Duration.ofMinutes(1)));
    k.put("advice.requestTimeout", Types.duration(Duration.ofMillis(100), Duration.ofMinutes(1)));
    // remount: growing a tmpfs that is too small (issue 4)
    k.put("remount.enabled", Types.bool());
    k.put("remount.targetSize", Types.sizeOrPercent(1L << 20));
    k.put("remount.maxSize", Types.sizeOrPercent(1L << 20));
    k.put("remount.cooldown", Types.duration(Duration.ZERO, Duration.ofDays(7)));
    // metrics: the Prometheus endpoint and the node_exporter textfile (issue 5)
    k.put("metrics.listen", Types.listenAddress());
    k.put("metrics.textfile", PathTypes.optionalTextfile());
    // namespaces: which mount namespaces shmguard acts in (issue 12)
    k.put("namespaces.actInUserNamespaces", Types.bool());
    // families: each segment family beside NCCL, reported by default, reaped when its section says so
    FamilySection.addKeys(k);
    return Map.copyOf(k);
  }

  /** True when {@code path} names a section (a mapping of keys), such as "reap". */
  static boolean isSection(String path) {
    String prefix = path + ".";
    return KEYS.keySet().stream().anyMatch(key -> key.startsWith(prefix));
  }

  /** The names allowed directly under {@code section} ("" for the top level). */
  static Set<String> childrenOf(String section) {
    String prefix = section.isEmpty() ? "" : section + ".";
    Set<String> names = new TreeSet<>();
    for (String key : KEYS.keySet()) {
      if (key.startsWith(prefix)) {
        String rest = key.substring(prefix.length());
        int dot = rest.indexOf('.');
        names.add(dot < 0 ? rest : rest.substring(0, dot));
      }
    }
    return names;
  }
}
