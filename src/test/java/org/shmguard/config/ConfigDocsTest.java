package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The README's configuration table is the operator's reference: every key the schema knows is in it. */
class ConfigDocsTest {

  @Test
  void everyConfigurationKeyIsDocumentedInTheReadme() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    for (String key : ConfigSchema.KEYS.keySet()) {
      String row = key.startsWith(FamilySection.SECTION + ".") ? familyRow(key) : key;
      assertThat(readme).as("README row for %s", key).contains("| `" + row + "` |");
    }
  }

  /** A family's keys share one row per key ({@code families.<family>.reap}); docs/families.md names each family's section. */
  @Test
  void everySegmentFamilySectionIsNamedInTheReadmeAndTheFamiliesDoc() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String doc = Files.readString(Path.of("docs/families.md"));
    for (var family : org.shmguard.policy.family.SegmentFamilies.standard().configurable()) {
      assertThat(readme).as("README names family %s", family.name()).contains("`" + family.name() + "`");
      assertThat(doc).as("docs/families.md names family %s", family.name()).contains("`" + family.name() + "`");
    }
  }

  private static String familyRow(String key) {
    String[] parts = key.split("\\.");
    return parts[0] + ".<family>." + parts[2];
  }
}
