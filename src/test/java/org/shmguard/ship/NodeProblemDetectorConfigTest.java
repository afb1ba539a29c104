package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The shipped node-problem-detector plugin configurations are valid JSON of the custom plugin
 * monitor's shape, one file per Node condition (NVSentinel's validated pattern) with
 * skip_initial_status, and the Kubernetes manifest that runs NPD carries the same files and
 * reaches the node's shmguard socket without privilege.
 */
public class NodeProblemDetectorConfigTest {
  public static final Path DIR = Path.of("packaging/node-problem-detector");
  /** Each shipped file and the one condition it sets. */
  public static final Map<String, String> FILES = Map.of(
      "shmguard-full.json", "ShmFull",
      "shmguard-leak.json", "ShmLeak",
      "shmguard-down.json", "ShmguardDown");
  private static final Path MANIFEST = Path.of("packaging/kubernetes/node-problem-detector.yaml");

  @Test
  void theDirectoryHoldsOneConfigPerConditionAndNothingElse() throws Exception {
    try (var files = Files.list(DIR)) {
      assertThat(files.map(f -> f.getFileName().toString())).containsExactlyInAnyOrderElementsOf(FILES.keySet());
    }
  }

  @Test
  void eachConfigRunsThePythonProbeForItsOneConditionAndSkipsTheInitialStatus() throws Exception {
    Set<String> sources = new HashSet<>();
    for (var e : FILES.entrySet()) {
      JsonNode c = new ObjectMapper().readTree(DIR.resolve(e.getKey()).toFile());
      String condition = e.getValue();
      assertThat(c.path("plugin").asText()).as(e.getKey()).isEqualTo("custom");
      assertThat(sources.add(c.path("source").asText())).as("a source of its own: " + c.path("source")).isTrue();
      JsonNode pc = c.path("pluginConfig");
      for (String d : new String[] {"invoke_interval", "timeout"}) {
        assertThat(pc.path(d).asText()).as(d).matches("\\d+(ms|s|m|h)");
      }
      assertThat(pc.path("max_output_length").asInt()).isPositive();
      // NPD reads the flag as a JSON boolean; an NPD restart then keeps the condition until the first probe.
      assertThat(pc.path("skip_initial_status").isBoolean()).as(e.getKey() + " skip_initial_status").isTrue();
      assertThat(pc.path("skip_initial_status").booleanValue()).isTrue();
      assertThat(c.path("conditions")).hasSize(1);
      JsonNode cond = c.path("conditions").get(0);
      assertThat(cond.path("type").asText()).isEqualTo(condition);
      assertThat(cond.path("reason").asText()).isNotEmpty();
      assertThat(cond.path("message").asText()).isNotEmpty();
      assertThat(c.path("rules")).hasSize(1);
      JsonNode rule = c.path("rules").get(0);
      assertThat(rule.path("type").asText()).isEqualTo("permanent");
      assertThat(rule.path("condition").asText()).isEqualTo(condition);
      assertThat(rule.path("reason").asText()).isNotEmpty().isNotEqualTo(cond.path("reason").asText());
      assertThat(rule.path("path").asText()).isEqualTo("/usr/bin/python3");
      assertThat(rule.path("args").toString()).contains("\"/usr/share/shmguard/shmguard_client.py\",\"check\",\"--condition\"");
      // NPD refuses a rule whose timeout exceeds the global one.
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
    List<String> data = new ArrayList<>();
    configMap.path("data").fieldNames().forEachRemaining(data::add);
    assertThat(data).containsExactlyInAnyOrderElementsOf(FILES.keySet());
    for (String f : FILES.keySet()) {
      assertThat(json.readTree(configMap.at("/data/" + f).asText())).as(f).isEqualTo(json.readTree(DIR.resolve(f).toFile()));
    }

    JsonNode pod = daemonSet.at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");
    String monitors = null;
    for (JsonNode arg : c.path("command")) {
      if (arg.asText().startsWith("--config.custom-plugin-monitor=")) {
        monitors = arg.asText().substring("--config.custom-plugin-monitor=".length());
      }
    }
    assertThat(monitors).isNotNull();
    assertThat(monitors.split(",")).containsExactlyInAnyOrderElementsOf(
        FILES.keySet().stream().map(f -> "/config/shmguard/" + f).toList());
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
