package org.shmguard.config;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * One section of the configuration ({@code reap}, {@code capacity}, ...): the keys it owns with
 * the kind of value each takes, how it reads their values into its part of {@link Config}, and
 * the rules that tie its keys to each other. Adding a key is a change to its section alone (and
 * its default in the shipped config/shmguard.yaml).
 *
 * <pre>{@code
 * final class LogSection extends ConfigSection<Config.Log> {
 *   LogSection() { super("log"); key("level", Types.oneOf("error", "warn", "info", "debug")); }
 *   Config.Log read(Values v) { return new Config.Log(v.get("level")); }
 * }
 * }</pre>
 *
 * @param <T> the record the section becomes
 */
abstract class ConfigSection<T> {
  private final String name;
  private final Map<String, ValueType<?>> keys = new LinkedHashMap<>();

  /** @param name the section's name, "" for keys at the top level */
  ConfigSection(String name) {
    this.name = name;
  }

  final String name() {
    return name;
  }

  /** Declares a key of this section (in its constructor). */
  final void key(String key, ValueType<?> type) {
    keys.put(key, type);
  }

  /** Every key this section owns, by its full dotted path. */
  final Map<String, ValueType<?>> keys() {
    Map<String, ValueType<?>> full = new LinkedHashMap<>();
    keys.forEach((k, t) -> full.put(path(k), t));
    return Collections.unmodifiableMap(full);
  }

  final String path(String key) {
    return name.isEmpty() ? key : name + "." + key;
  }

  /** The section's record from every key's value. */
  abstract T read(Values v);

  /** The rules between keys, checked once every key has its value; the first broken one is thrown. */
  void check(Values v) throws ConfigException {}

  /** Every key's value (the files' over the defaults), as this section reads it; {@code placeOf} says where each was set. */
  final Values values(Map<String, Object> all, Function<String, ConfigPlace> placeOf) {
    return new Values(this, all, placeOf);
  }

  /** The values a section reads: its own keys by their short names, another section's by the full path. */
  static final class Values {
    private final ConfigSection<?> section;
    private final Map<String, Object> all;
    private final Function<String, ConfigPlace> placeOf;

    private Values(ConfigSection<?> section, Map<String, Object> all, Function<String, ConfigPlace> placeOf) {
      this.section = section;
      this.all = all;
      this.placeOf = placeOf;
    }

    /** The value of this section's {@code key}. */
    @SuppressWarnings("unchecked")
    <X> X get(String key) {
      return (X) all.get(section.path(key));
    }

    /** The value of another section's key, by its full path ("advice.socket"). */
    @SuppressWarnings("unchecked")
    <X> X other(String path) {
      return (X) all.get(path);
    }

    /**
     * An error about {@code key} (a full path) broken together with {@code otherKey}: it names the
     * file and line of the one set last (a later drop-in, or a later line of the same file), since
     * the key set last is usually the one just edited.
     */
    ConfigException broken(String key, String otherKey, String message) {
      ConfigPlace at = ConfigPlace.later(placeOf.apply(key), placeOf.apply(otherKey));
      return new ConfigException(at.source(), at.line(), key, message);
    }
  }
}
