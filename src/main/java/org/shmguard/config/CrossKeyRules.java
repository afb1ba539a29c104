package org.shmguard.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The rules that tie keys to each other, checked once every key has its value (the file's over
 * the defaults). Each rule lives in the section whose key it names ({@link ConfigSection#check});
 * this runs every section's rules, in {@link ConfigSchema#SECTIONS} order, and reports every
 * section's broken rule at once, so an operator fixes them in one edit. Each error names the key
 * that breaks the rule and the place of the one set last (a later file or line), since the key set last is usually the one
 * just edited.
 */
final class CrossKeyRules {
  private CrossKeyRules() {}

  /** @param placeOf where a key was set: its file and line, or the defaults */
  static void check(Map<String, Object> values, Function<String, ConfigPlace> placeOf) throws ConfigException {
    List<ConfigException> errors = new ArrayList<>();
    for (ConfigSection<?> section : ConfigSchema.SECTIONS) {
      try {
        section.check(section.values(values, placeOf));
      } catch (ConfigException e) {
        errors.add(e);
      }
    }
    if (!errors.isEmpty()) {
      throw ConfigException.all(errors);
    }
  }
}
