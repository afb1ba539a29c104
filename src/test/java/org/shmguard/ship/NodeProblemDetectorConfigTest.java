package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The shipped node-problem-detector plugin configuration is valid JSON of the custom plugin monitor's shape. */
class NodeProblemDetectorConfigTest {
  private static final Path FILE = Path.of("packaging/node-problem-detector/shmguard-monitor.json");

  @Test
  void pluginConfigRunsThePythonProbeForEachDeclaredCondition() throws Exception {
    JsonNode c = new ObjectMapper().readTree(FILE.toFile());

    assertThat(c.path("plugin").asText()).isEqualTo("custom");
    assertThat(c.path("source").asText()).isNotEmpty();
    JsonNode pc = c.path("pluginConfig");
    for (String d : new String[] {"invoke_interval", "timeout"}) {
      assertThat(pc.path(d).asText()).as(d).matches("\\d+(ms|s|m|h)");
    }
    assertThat(pc.path("max_output_length").asInt()).isPositive();
    Set<String> conditions = new HashSet<>();
    for (JsonNode cond : c.path("conditions")) {
      assertThat(cond.path("reason").asText()).isNotEmpty();
      conditions.add(cond.path("type").asText());
    }
    assertThat(c.path("rules")).isNotEmpty();
    for (JsonNode rule : c.path("rules")) {
      assertThat(rule.path("type").asText()).isIn("permanent", "temporary");
      if (rule.path("type").asText().equals("permanent")) {
        assertThat(conditions).contains(rule.path("condition").asText());
      }
      assertThat(rule.path("path").asText()).isEqualTo("/usr/bin/python3");
      assertThat(rule.path("args").toString()).contains("\"/usr/share/shmguard/shmguard_client.py\",\"check\",\"--condition\"");
    }
    assertThat(conditions).containsExactlyInAnyOrder("ShmFull", "ShmLeak", "ShmguardDown");
  }
}
