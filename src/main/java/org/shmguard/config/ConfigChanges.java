package org.shmguard.config;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a reload ({@code systemctl reload shmguard}, SIGHUP) may change in a running daemon, and
 * what waits for a restart. The sections a running daemon reads once, at start, are
 * {@link #RESTART_SECTIONS}: {@code daemon} (its schedules, settle time and pidfd limit),
 * {@code advice} (the socket and advice file it made, and the socket's limits) and
 * {@code metrics} (the endpoint it listens on, the textfile it writes). Every other key
 * ({@code mounts}, {@code reap}, {@code families}, {@code capacity}, {@code remount}, {@code log},
 * {@code namespaces}, {@code runtimes}) applies from the next pass.
 *
 * <pre>{@code
 * List<String> changed = ConfigChanges.between(running, loaded);        // ["reap.dryRun", "metrics.listen"]
 * Config now = ConfigChanges.reloaded(running, loaded);                 // reap.dryRun from loaded, metrics as running
 * }</pre>
 */
public final class ConfigChanges {
  /** The sections a running daemon keeps until it restarts. */
  public static final Set<String> RESTART_SECTIONS = Set.of("daemon", "advice", "metrics");

  private ConfigChanges() {}

  /** Whether a change to {@code key} (as {@link #between} names it) waits for a restart. */
  public static boolean needsRestart(String key) {
    int dot = key.indexOf('.');
    return RESTART_SECTIONS.contains(dot < 0 ? key : key.substring(0, dot));
  }

  /**
   * The keys whose values differ, by their names in the file ("reap.dryRun"); the segment
   * families' settings as "families", the mount list as "mounts".
   */
  public static List<String> between(Config a, Config b) {
    List<String> keys = new ArrayList<>();
    if (!a.mounts().equals(b.mounts())) {
      keys.add("mounts");
    }
    for (RecordComponent section : Config.class.getRecordComponents()) {
      Object x = value(section, a);
      Object y = value(section, b);
      if (!(x instanceof Record) || Objects.equals(x, y)) {
        continue; // the source, the mounts, or a section with no change
      }
      for (RecordComponent key : x.getClass().getRecordComponents()) {
        if (!Objects.equals(value(key, x), value(key, y))) {
          keys.add(key.getName().equals("families") ? "families" : section.getName() + "." + key.getName());
        }
      }
    }
    return keys;
  }

  /** What a running daemon runs with after a reload of {@code loaded}: its restart-only sections stay {@code running}'s. */
  public static Config reloaded(Config running, Config loaded) {
    return new Config(loaded.source(), loaded.mounts(), loaded.reap(), running.daemon(), loaded.log(), loaded.capacity(),
        running.advice(), loaded.remount(), running.metrics(), loaded.namespaces(),
        loaded.runtimes());
  }

  private static Object value(RecordComponent c, Object record) {
    try {
      return c.getAccessor().invoke(record);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read " + c.getName(), e);
    }
  }
}
