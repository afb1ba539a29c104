package org.shmguard.ship;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The shipped NVSentinel values overlay: one Kubernetes Object Monitor policy per Node condition
 * that shmguard's node-problem-detector files set, each in the policy shape NVSentinel documents
 * (name, enabled, resource, predicate.expression, healthEvent), store-only and never fatal.
 */
class NvSentinelPolicyTest {
  private static final Path VALUES = Path.of("packaging/nvsentinel/shmguard-values.yaml");
  /** The policy fields of NVSentinel's kubernetes-object-monitor configuration. */
  private static final Set<String> POLICY_FIELDS = Set.of("name", "enabled", "resource", "predicate", "nodeAssociation",
      "healthEvent");
  private static final Set<String> EVENT_FIELDS = Set.of("componentClass", "isFatal", "message", "recommendedAction",
      "errorCode", "processingStrategy");
  /** RecommendedAction of NVSentinel's data-models/protobufs/health_event.proto. */
  private static final Set<String> ACTIONS = Set.of("NONE", "COMPONENT_RESET", "CONTACT_SUPPORT", "RUN_FIELDDIAG",
      "RESTART_VM", "RESTART_BM", "REPLACE_VM", "RUN_DCGMEUD", "RESTART_APP", "UNKNOWN");
  private static final Pattern CONDITION = Pattern.compile("c\\.type == \"([A-Za-z]+)\" && c\\.status == \"True\"");

  @Test
  void eachShmguardConditionBecomesAStoreOnlyNonFatalHealthEvent() throws Exception {
    JsonNode v = new ObjectMapper(new YAMLFactory()).readTree(VALUES.toFile());
    assertThat(v.at("/global/kubernetesObjectMonitor/enabled").asBoolean()).isTrue();
    List<String> conditions = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (JsonNode p : v.at("/kubernetes-object-monitor/policies")) {
      p.fieldNames().forEachRemaining(f -> assertThat(POLICY_FIELDS).as("policy field").contains(f));
      assertThat(names.add(p.path("name").asText())).isTrue();
      assertThat(p.path("enabled").asBoolean()).isTrue();
      assertThat(p.at("/resource/group").isTextual()).isTrue();
      assertThat(p.at("/resource/group").asText()).isEmpty();
      assertThat(p.at("/resource/version").asText()).isEqualTo("v1");
      assertThat(p.at("/resource/kind").asText()).isEqualTo("Node");
      Matcher m = CONDITION.matcher(p.at("/predicate/expression").asText());
      assertThat(m.find()).as(p.at("/predicate/expression").asText()).isTrue();
      conditions.add(m.group(1));
      JsonNode e = p.path("healthEvent");
      e.fieldNames().forEachRemaining(f -> assertThat(EVENT_FIELDS).as("healthEvent field").contains(f));
      assertThat(e.path("isFatal").isBoolean()).isTrue();
      assertThat(e.path("isFatal").booleanValue()).as("never fatal by default").isFalse();
      assertThat(e.path("processingStrategy").asText()).isEqualTo("STORE_ONLY");
      assertThat(ACTIONS).contains(e.path("recommendedAction").asText());
      assertThat(e.path("message").asText()).isNotEmpty();
      assertThat(e.path("errorCode")).isNotEmpty();
    }
    assertThat(conditions).containsExactlyInAnyOrderElementsOf(NodeProblemDetectorConfigTest.FILES.values());
  }
}
