package org.shmguard.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Every configuration key, by dotted path, with the kind of value it takes: the union of the
 * sections' keys ({@link ConfigSection}). A key not listed here is an error; every key listed here
 * must have its default in the shipped config/shmguard.yaml.
 */
final class ConfigSchema {
  static final MountsSection MOUNTS = new MountsSection();
  static final ReapSection REAP = new ReapSection();
  static final DaemonSection DAEMON = new DaemonSection();
  static final LogSection LOG = new LogSection();
  static final CapacitySection CAPACITY = new CapacitySection();
  static final AdviceSection ADVICE = new AdviceSection();
  static final RemountSection REMOUNT = new RemountSection();
  static final MetricsSection METRICS = new MetricsSection();
  static final NamespacesSection NAMESPACES = new NamespacesSection();
  static final FamilySection FAMILIES = new FamilySection();
  static final RuntimesSection RUNTIMES = new RuntimesSection();
  /** Every section, in the order their rules are checked (the first broken rule is the one reported). */
  static final List<ConfigSection<?>> SECTIONS = List.of(MOUNTS, CAPACITY, REMOUNT, DAEMON, REAP, LOG, ADVICE, METRICS,
      NAMESPACES, FAMILIES, RUNTIMES);
  static final Map<String, ValueType<?>> KEYS = build();

  private ConfigSchema() {}

  private static Map<String, ValueType<?>> build() {
    Map<String, ValueType<?>> k = new LinkedHashMap<>();
    for (ConfigSection<?> section : SECTIONS) {
      k.putAll(section.keys());
    }
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
