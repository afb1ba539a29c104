package org.shmguard.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.shmguard.policy.family.FamilyRules;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.policy.family.SegmentFamilies;
import org.shmguard.policy.family.SegmentFamily;

/**
 * The {@code families} section: one sub-section per configurable segment family, each with the
 * same two keys, {@code reap} and {@code grace}, whose defaults the shipped configuration spells
 * out. The keys come from the family registry, so a new family brings its section with it.
 */
final class FamilySection {
  static final String SECTION = "families";

  private FamilySection() {}

  /** Adds every family's keys to the schema. */
  static void addKeys(Map<String, ValueType<?>> keys) {
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      keys.put(reapKey(f), Types.bool());
      keys.put(graceKey(f), Types.duration(Duration.ZERO, Duration.ofDays(30)));
    }
  }

  /** The families' settings from validated values. */
  static FamilyRules read(Map<String, Object> values) {
    Map<String, FamilySettings> settings = new HashMap<>();
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      settings.put(f.name(), new FamilySettings((Boolean) values.get(reapKey(f)), (Duration) values.get(graceKey(f))));
    }
    return FamilyRules.of(settings);
  }

  static String reapKey(SegmentFamily f) {
    return SECTION + "." + f.name() + ".reap";
  }

  static String graceKey(SegmentFamily f) {
    return SECTION + "." + f.name() + ".grace";
  }
}
