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
      assertThat(readme).as("README row for %s", key).contains("| `" + key + "` |");
    }
  }
}
