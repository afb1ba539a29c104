package org.shmguard.policy.family;

import java.util.Map;

/**
 * The families the decide stage watches, with their settings. A family with settings is
 * recognised, judged and reported whatever {@code reap.patterns} says; NCCL has none (reap.*
 * configures it), and a policy built without families ({@link #none()}) judges only what a
 * pattern allows, as before families existed.
 */
public final class FamilyRules {
  private static final FamilyRules NONE = new FamilyRules(SegmentFamilies.standard(), Map.of());
  private final SegmentFamilies families;
  private final Map<String, FamilySettings> settings;

  private FamilyRules(SegmentFamilies families, Map<String, FamilySettings> settings) {
    this.families = families;
    this.settings = Map.copyOf(settings);
  }

  /** Every standard family known for its rules, none watched beyond the patterns. */
  public static FamilyRules none() {
    return NONE;
  }

  /** The standard families, each configurable one watched with {@code settings} (its defaults where absent). */
  public static FamilyRules of(Map<String, FamilySettings> settings) {
    Map<String, FamilySettings> all = new java.util.HashMap<>();
    for (SegmentFamily f : SegmentFamilies.standard().configurable()) {
      all.put(f.name(), settings.getOrDefault(f.name(), FamilySettings.defaultsOf(f)));
    }
    for (String name : settings.keySet()) {
      if (!all.containsKey(name)) {
        throw new IllegalArgumentException("no configurable segment family is called " + name);
      }
    }
    return new FamilyRules(SegmentFamilies.standard(), all);
  }

  /** Each configurable family at its defaults. */
  public static FamilyRules defaults() {
    return of(Map.of());
  }

  public SegmentFamily familyOf(String fileName) {
    return families.of(fileName);
  }

  /** The creator pid a file's name gives (PyTorch's, SGLang's), or empty: the pids a pass looks up. */
  public java.util.OptionalInt creatorPid(String fileName) {
    SegmentFamily family = familyOf(fileName);
    return family == null ? java.util.OptionalInt.empty() : family.creatorPid(fileName);
  }

  /** Whether a file of this name is registered with its job's torch_shm_manager: the files a pass looks for managers for. */
  public boolean registeredWithTorchManager(String fileName) {
    SegmentFamily family = familyOf(fileName);
    return family != null && family.registeredWithTorchManager();
  }

  /** The settings of a watched family, or null when it is not watched (NCCL, or no families). */
  public FamilySettings settings(SegmentFamily family) {
    return family == null ? null : settings.get(family.name());
  }

  /** Whether a file of this name is judged even when no pattern allows it. */
  public boolean watches(String fileName) {
    return settings(familyOf(fileName)) != null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FamilyRules r && r.settings.equals(settings);
  }

  @Override
  public int hashCode() {
    return settings.hashCode();
  }

  @Override
  public String toString() {
    return "FamilyRules" + new java.util.TreeMap<>(settings);
  }
}
