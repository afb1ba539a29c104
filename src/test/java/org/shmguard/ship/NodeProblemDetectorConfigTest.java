package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The shipped node-problem-detector plugin configuration is valid JSON of the custom plugin
 * monitor's shape, and the Kubernetes manifest that runs NPD carries the same file and reaches
 * the node's shmguard socket without privilege.
 */
class NodeProblemDetectorConfigTest {
  private static final Path FILE = Path.of("packaging/node-problem-detector/shmguard-monitor.json");
  private static final Path MANIFEST = Path.of("packaging/kubernetes/node-problem-detector.yaml");

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
    // NPD refuses a rule whose timeout exceeds the global one.
    for (JsonNode rule : c.path("rules")) {
      assertThat(seconds(rule.path("timeout").asText())).isLessThanOrEqualTo(seconds(pc.path("timeout").asText()));
    }
  }

  @Test
  void theManifestRunsNpdWithTheSameConfigAndOnlyTheSocketDirectoryReadOnly() throws Exception {
    ObjectMapper yaml = new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory());
    JsonNode configMap = null;
    JsonNode daemonSet = null;
    try (var parser = new com.fasterxml.jackson.dataformat.yaml.YAMLFactory().createParser(MANIFEST.toFile())) {
      var it = yaml.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode d = it.next();
        switch (d.path("kind").asText()) {
          case "ConfigMap" -> configMap = d;
          case "DaemonSet" -> daemonSet = d;
          default -> { }
        }
      }
    }
    assertThat(configMap).isNotNull();
    assertThat(daemonSet).isNotNull();
    ObjectMapper json = new ObjectMapper();
    assertThat(json.readTree(configMap.at("/data/shmguard-monitor.json").asText())).isEqualTo(json.readTree(FILE.toFile()));

    JsonNode pod = daemonSet.at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");
    assertThat(c.path("command").toString()).contains("--config.custom-plugin-monitor=/config/shmguard/shmguard-monitor.json");
    assertThat(pod.path("hostPID").asBoolean()).isFalse();
    assertThat(c.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    assertThat(c.at("/securityContext/capabilities/drop").toString()).isEqualTo("[\"ALL\"]");
    Set<String> hostPaths = new HashSet<>();
    for (JsonNode v : pod.path("volumes")) {
      if (v.has("hostPath")) {
        hostPaths.add(v.at("/hostPath/path").asText());
      }
    }
    assertThat(hostPaths).containsExactly("/run/shmguard");
    for (JsonNode m : c.path("volumeMounts")) {
      assertThat(m.path("readOnly").asBoolean()).as(m.toString()).isTrue();
    }
  }

  private static long seconds(String d) {
    return Long.parseLong(d.substring(0, d.length() - 1)) * (d.endsWith("m") ? 60 : 1);
  }
}
