package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Each key belongs to exactly one section, and lies under that section's name. */
class ConfigSectionsTest {

  @Test
  void everyKeyIsOwnedByExactlyOneSection() {
    int owned = 0;
    for (ConfigSection<?> s : ConfigSchema.SECTIONS) {
      owned += s.keys().size();
      for (String key : s.keys().keySet()) {
        assertThat(key).as("a key of section '%s'", s.name())
            .startsWith(s.name().isEmpty() ? "" : s.name() + ".")
            .doesNotContain(s.name().isEmpty() ? "." : "..");
      }
    }
    assertThat(owned).as("keys declared by the sections, none twice").isEqualTo(ConfigSchema.KEYS.size());
  }

  @Test
  void everySectionReadsItsPartOfTheDefaults() throws Exception {
    Config c = ConfigLoader.defaults();
    assertThat(c.mounts()).isNotEmpty();
    assertThat(c.reap().grace()).isPositive();
    assertThat(c.capacity().critical()).isGreaterThan(c.capacity().warn());
    assertThat(c.advice().socket()).isAbsolute();
    assertThat(c.log().level()).isNotBlank();
    assertThat(c.namespaces()).isNotNull();
    assertThat(c.metrics()).isNotNull();
    assertThat(c.remount().cooldown()).isNotNull();
    assertThat(c.daemon().interval()).isPositive();
  }
}
