package org.shmguard.config;

import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * The rules that tie keys to each other, checked once every key has its value (the file's over
 * the defaults). Each rule lives in the section whose key it names ({@link ConfigSection#check});
 * this runs them, section by section in {@link ConfigSchema#SECTIONS} order, and the first broken
 * one is reported. Each error names the key that breaks the rule and the later of the two lines,
 * since the key set last is usually the one just edited.
 */
final class CrossKeyRules {
  private CrossKeyRules() {}

  /** @param lineOf the line a key was set on in the file, 0 for a default */
  static void check(String source, Map<String, Object> values, ToIntFunction<String> lineOf) throws ConfigException {
    for (ConfigSection<?> section : ConfigSchema.SECTIONS) {
      section.check(section.values(source, values, lineOf));
    }
  }
}
