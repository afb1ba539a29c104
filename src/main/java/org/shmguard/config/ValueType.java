package org.shmguard.config;

/**
 * How one configuration key's value is read and what it allows.
 *
 * @param <T> the Java value the key becomes
 */
interface ValueType<T> {
  /** The value of {@code node}; throws IllegalArgumentException with a sentence about what is wrong. */
  T parse(YamlNode node);

  /** What the key allows, in words: "a duration such as 2m, 30s or 500ms". */
  String allowed();
}
