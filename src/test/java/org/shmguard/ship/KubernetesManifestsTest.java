package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes manifests validate against the Kubernetes API schemas (the npm package
 * kubernetes-models: JSON schemas generated from Kubernetes' OpenAPI spec, checked with ajv),
 * and the DaemonSet has what shmguard's safety rules need.
 */
class KubernetesManifestsTest {
  private static final Path DIR = Path.of("packaging/kubernetes");
  private static final Path VALIDATOR = Path.of("src/test/k8s-validate");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void everyManifestValidatesAgainstTheKubernetesSchemas() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/node")), "node is not installed");
    assumeTrue(Files.isDirectory(VALIDATOR.resolve("node_modules/kubernetes-models")),
        "the validator is not installed: npm ci --prefix src/test/k8s-validate (.ci/run does)");
    ArrayNode all = YAML.createArrayNode();
    try (var files = Files.list(DIR)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        all.addAll(documents(f));
      }
    }
    assertThat(all).hasSizeGreaterThanOrEqualTo(5);

    Process p = new ProcessBuilder("node", "validate.mjs").directory(VALIDATOR.toFile()).redirectErrorStream(true).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(JSON.writeValueAsBytes(all));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();

    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("valid DaemonSet/shmguard").doesNotContain("INVALID");
  }

  @Test
  void theValidatorRejectsAWrongMountPropagation() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/node")), "node is not installed");
    assumeTrue(Files.isDirectory(VALIDATOR.resolve("node_modules/kubernetes-models")), "the validator is not installed");
    String broken = Files.readString(DIR.resolve("shmguard.yaml")).replace("mountPropagation: HostToContainer", "mountPropagation: rslave");
    Process p = new ProcessBuilder("node", "validate.mjs").directory(VALIDATOR.toFile()).redirectErrorStream(true).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(JSON.writeValueAsBytes(documents(broken)));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(out).contains("INVALID DaemonSet/shmguard");
  }

  @Test
  void daemonSetSeesEveryProcessAndEveryShmMountWithLeastCapabilities() throws Exception {
    JsonNode ds = documents(DIR.resolve("shmguard.yaml")).stream()
        .filter(d -> d.path("kind").asText().equals("DaemonSet")).findFirst().orElseThrow();
    JsonNode pod = ds.at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");

    assertThat(pod.path("hostPID").asBoolean()).as("hostPID: shmguard must see every holder").isTrue();
    assertThat(hostPathMount(pod, c, "/dev/shm").path("mountPropagation").asText()).isEqualTo("HostToContainer");
    assertThat(hostPathMount(pod, c, "/var/lib/kubelet/pods").path("mountPropagation").asText()).isEqualTo("HostToContainer");
    assertThat(hostPathMount(pod, c, "/run/shmguard").path("mountPath").asText()).isEqualTo("/run/shmguard");
    assertThat(c.at("/securityContext/privileged").asBoolean()).isFalse();
    assertThat(c.at("/securityContext/capabilities/drop").toString()).isEqualTo("[\"ALL\"]");
    List<String> added = new ArrayList<>();
    c.at("/securityContext/capabilities/add").forEach(n -> added.add(n.asText()));
    assertThat(added).containsExactlyInAnyOrder("SYS_PTRACE", "FOWNER", "LEASE", "DAC_READ_SEARCH", "DAC_OVERRIDE");
    assertThat(c.at("/resources/requests/memory").asText()).isNotEmpty();
    assertThat(c.at("/resources/limits/memory").asText()).isNotEmpty();
    assertThat(c.at("/livenessProbe/httpGet/port").asText()).isEqualTo("metrics");
    assertThat(c.path("args").toString()).contains("daemon");
  }

  private static JsonNode hostPathMount(JsonNode pod, JsonNode container, String hostPath) {
    String volume = null;
    for (JsonNode v : pod.path("volumes")) {
      if (v.at("/hostPath/path").asText().equals(hostPath)) {
        volume = v.path("name").asText();
      }
    }
    assertThat(volume).as("a hostPath volume for " + hostPath).isNotNull();
    for (JsonNode m : container.path("volumeMounts")) {
      if (m.path("name").asText().equals(volume)) {
        return m;
      }
    }
    throw new AssertionError("volume " + volume + " is not mounted");
  }

  private static List<JsonNode> documents(Path file) throws IOException {
    return documents(Files.readString(file));
  }

  private static List<JsonNode> documents(String yaml) throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    try (YAMLParser parser = new YAMLFactory().createParser(yaml)) {
      var it = YAML.readValues(parser, JsonNode.class);
      while (it.hasNext()) {
        JsonNode d = it.next();
        if (d != null && !d.isMissingNode() && !d.isNull()) {
          docs.add(d);
        }
      }
    }
    return docs;
  }
}
