package org.shmguard.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.shmguard.policy.family.FamilyRules;
import org.shmguard.policy.family.FamilySettings;
import org.shmguard.policy.family.SegmentFamilies;
import org.shmguard.policy.family.SegmentFamily;

/**
 * {@code families}: one sub-section per configurable segment family, each with the same two keys,
 * {@code reap} and {@code grace}, whose defaults the shipped configuration spells out. The keys
 * come from the family registry, so a new family brings its section with it. The settings end up
 * in {@link Config.Reap#families()}, beside the patterns they add to.
 */
final class FamilySection extends ConfigSection<FamilyRules> {
  static final String SECTION = "families";

  FamilySection() {
    super(SECTION);
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      key(f.name() + ".reap", Types.bool());
      key(f.name() + ".grace", Types.duration(Duration.ZERO, Duration.ofDays(30)));
    }
  }

  @Override
  FamilyRules read(Values v) {
    return rules(v);
  }

  /** The families' settings, read from any section's values (the reap section carries them). */
  static FamilyRules rules(Values v) {
    Map<String, FamilySettings> settings = new HashMap<>();
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      settings.put(f.name(), new FamilySettings(v.<Boolean>other(reapKey(f)), v.<Duration>other(graceKey(f))));
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
