package org.shmguard.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.text.Durations;
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

  /**
   * The least grace of a family whose files are handed from process to process by name: a file
   * waits unheld between its last holder letting go and its receiver opening it (58-75 ms in
   * PyTorch's own test_fs_pool), and a grace is what keeps it through that.
   */
  static final Duration LEAST_HAND_ON_GRACE = Duration.ofSeconds(10);

  @Override
  FamilyRules read(Values v) {
    return rules(v);
  }

  /**
   * Settings that would reap files a live job has handed on are refused: {@code reap: true} for a
   * family whose names give their creator's pid (its files are reaped once the creator is provably
   * dead, with no setting, and never while it may live, so {@code true} could only mean reaping
   * live data), and a grace too short for a hand-on in any family whose files are handed on.
   */
  @Override
  void check(Values v) throws ConfigException {
    List<ConfigException> errors = new ArrayList<>();
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      if (f.holdersExitedMeansLeaked()) {
        continue;
      }
      Duration grace = v.other(graceKey(f));
      if (grace.compareTo(LEAST_HAND_ON_GRACE) < 0) {
        errors.add(v.broken(graceKey(f), graceKey(f), Durations.human(grace) + " is shorter than "
            + Durations.human(LEAST_HAND_ON_GRACE) + ": " + f.name() + " files are handed from one process to another "
            + "by name and wait unheld on the way, so a shorter grace would reap them before their receiver opens them; "
            + "allowed: a duration from " + Durations.human(LEAST_HAND_ON_GRACE) + " to 30d"));
      }
      if (f.namesItsCreator() && Boolean.TRUE.equals(v.other(reapKey(f)))) {
        errors.add(v.broken(reapKey(f), reapKey(f), "true is refused: a " + f.name() + " file is already reaped once "
            + "the creator its name gives is provably dead, with no setting, and true could only add reaping a file "
            + "whose creator lives, which may be on its way to a receiver; remove the key or set it to false"));
      }
    }
    if (!errors.isEmpty()) {
      throw ConfigException.all(errors);
    }
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
