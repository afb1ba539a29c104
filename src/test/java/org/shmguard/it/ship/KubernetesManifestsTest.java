package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;

/**
 * The Kubernetes deployment as {@code kubectl apply -k} would send it: the kustomize base and its
 * Prometheus Operator overlay, built with {@code kubectl kustomize} where a kubectl with kustomize
 * v4 or later is installed and with {@link KustomizeBuild} otherwise, and the manifests beside
 * them. Every object validates strictly against the Kubernetes schemas (src/test/k8s-validate:
 * unknown fields rejected, values checked), and the objects fit together: the DaemonSet has what
 * shmguard's safety rules need, runs on GPU nodes with a priority class the namespace admits,
 * and its metrics port is reachable by Prometheus only.
 */
class KubernetesManifestsTest {
  private static final Path DIR = Path.of("packaging/kubernetes");
  private static final Path BASE = DIR.resolve("base");
  private static final Path WITH_PODMONITOR = DIR.resolve("prometheus-operator");
  private static final Path VALIDATOR = Path.of("src/test/k8s-validate");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern KUSTOMIZE_VERSION = Pattern.compile("Kustomize Version: v(\\d+)\\.");

  @Test
  void everyObjectValidatesStrictlyAgainstTheKubernetesSchemas() throws Exception {
    List<JsonNode> all = new ArrayList<>(build(WITH_PODMONITOR));
    try (Stream<Path> files = Files.list(DIR)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        all.addAll(KustomizeBuild.documents(Files.readString(f)));
      }
    }
    assertThat(all).extracting(o -> o.path("kind").asText()).contains("Namespace", "ServiceAccount", "ResourceQuota",
        "ConfigMap", "DaemonSet", "Service", "NetworkPolicy", "PodMonitor", "Pod");

    String out = validate(all);

    assertThat(out).contains("valid DaemonSet/shmguard", "valid PodMonitor/shmguard", "valid NetworkPolicy/shmguard")
        .doesNotContain("INVALID");
  }

  @Test
  void theValidatorRejectsAMisspelledField() throws Exception {
    String json = JSON.writeValueAsString(build(WITH_PODMONITOR))
        .replace("\"imagePullPolicy\"", "\"imagePullPolicyy\"")
        .replace("\"podMetricsEndpoints\"", "\"podMetricEndpoints\"");

    String out = validate(JSON.readTree(json));

    assertThat(out).contains("INVALID DaemonSet/shmguard: unknown field spec.template.spec.containers[0].imagePullPolicyy")
        .contains("INVALID PodMonitor/shmguard: unknown field spec.podMetricEndpoints");
  }

  @Test
  void theValidatorRejectsAWrongMountPropagation() throws Exception {
    String json = JSON.writeValueAsString(build(BASE)).replace("\"HostToContainer\"", "\"rslave\"");

    assertThat(validate(JSON.readTree(json))).contains("INVALID DaemonSet/shmguard");
  }

  @Test
  void kubectlKustomizeBuildsWhatTheTestsBuild() throws Exception {
    Optional<String> kubectl = kubectl();
    assumeTrue(kubectl.isPresent(), "no kubectl with kustomize v4 or later: the tests use the equivalent build alone");
    for (Path dir : List.of(BASE, WITH_PODMONITOR)) {
      assertThat(byName(kubectlBuild(kubectl.get(), dir))).as(dir.toString()).isEqualTo(byName(KustomizeBuild.build(dir)));
    }
  }

  @Test
  void daemonSetSeesEveryProcessAndEveryShmMountWithLeastCapabilities() throws Exception {
    JsonNode pod = daemonSet(build(BASE)).at("/spec/template/spec");
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
    assertThat(c.path("args").toString()).contains("daemon");
  }

  @Test
  void probesAskTheDaemonWhetherPassesComplete() throws Exception {
    JsonNode c = daemonSet(build(BASE)).at("/spec/template/spec/containers/0");

    // /readyz fails while no pass completes (ReadinessTest), / once the loop is stuck (LivenessTest).
    assertThat(c.at("/readinessProbe/httpGet/path").asText()).isEqualTo("/readyz");
    assertThat(c.at("/readinessProbe/httpGet/port").asText()).isEqualTo("metrics");
    assertThat(c.at("/livenessProbe/httpGet/path").asText()).isEqualTo("/");
    assertThat(c.at("/livenessProbe/httpGet/port").asText()).isEqualTo("metrics");
  }

  @Test
  void runsOnGpuNodesOnlyWithACriticalPriorityItsNamespaceAdmits() throws Exception {
    List<JsonNode> objects = build(BASE);
    JsonNode ds = daemonSet(objects);
    JsonNode pod = ds.at("/spec/template/spec");
    String priority = pod.path("priorityClassName").asText();
    JsonNode quota = only(objects, "ResourceQuota");

    assertThat(pod.at("/nodeSelector/nvidia.com~1gpu.present").asText()).isEqualTo("true");
    assertThat(priority).isEqualTo("system-node-critical");
    // Where the critical classes are limited (ResourceQuota admission's limitedResources), a pod
    // of one is admitted only in a namespace with a quota whose scope selects its class.
    assertThat(quota.at("/metadata/namespace").asText()).isEqualTo(ds.at("/metadata/namespace").asText());
    JsonNode scope = quota.at("/spec/scopeSelector/matchExpressions/0");
    assertThat(scope.path("scopeName").asText()).isEqualTo("PriorityClass");
    assertThat(scope.path("operator").asText()).isEqualTo("In");
    assertThat(scope.path("values").toString()).contains("\"" + priority + "\"");
    assertThat(quota.at("/spec/hard").size()).as("counts pods only: limits nothing a pod must declare").isEqualTo(1);
    assertThat(quota.at("/spec/hard/pods").asText()).isEqualTo("1M");
  }

  @Test
  void onlyPrometheusReachesTheMetricsPortAndTheDaemonReachesNothing() throws Exception {
    List<JsonNode> objects = build(WITH_PODMONITOR);
    JsonNode template = daemonSet(objects).at("/spec/template");
    JsonNode policy = only(objects, "NetworkPolicy");
    JsonNode service = only(objects, "Service");
    JsonNode monitor = only(objects, "PodMonitor");
    String app = template.at("/metadata/labels/app.kubernetes.io~1name").asText();
    assertThat(template.at("/spec/containers/0/ports/0/name").asText()).isEqualTo("metrics");

    assertThat(policy.at("/spec/podSelector/matchLabels/app.kubernetes.io~1name").asText()).isEqualTo(app);
    assertThat(policy.at("/spec/policyTypes").toString()).isEqualTo("[\"Ingress\",\"Egress\"]");
    assertThat(policy.at("/spec/egress").isMissingNode()).as("no egress rule: none allowed").isTrue();
    assertThat(policy.at("/spec/ingress")).hasSize(1);
    assertThat(policy.at("/spec/ingress/0/ports").toString()).isEqualTo("[{\"port\":\"metrics\",\"protocol\":\"TCP\"}]");
    JsonNode from = policy.at("/spec/ingress/0/from");
    assertThat(from).hasSize(1);
    assertThat(from.at("/0/podSelector/matchLabels/app.kubernetes.io~1name").asText()).isEqualTo("prometheus");
    assertThat(from.at("/0/namespaceSelector/matchLabels").size()).as("one namespace, not any").isEqualTo(1);

    assertThat(service.at("/spec/clusterIP").asText()).isEqualTo("None");
    assertThat(service.at("/spec/selector/app.kubernetes.io~1name").asText()).isEqualTo(app);
    assertThat(service.at("/spec/ports/0/targetPort").asText()).isEqualTo("metrics");
    assertThat(monitor.at("/spec/selector/matchLabels/app.kubernetes.io~1name").asText()).isEqualTo(app);
    assertThat(monitor.at("/spec/podMetricsEndpoints/0/port").asText()).isEqualTo("metrics");
    assertThat(monitor.at("/spec/podMetricsEndpoints/0/path").asText()).isEqualTo("/metrics");
  }

  @Test
  void anOverlayChoosesTheImageAndTheNamespace(@TempDir Path tmp) throws Exception {
    // As docs/kubernetes.md tells an operator to write it, beside a checkout of the base.
    Path overlay = Files.createDirectories(tmp.resolve("site"));
    Path base = Files.createDirectories(tmp.resolve("base"));
    try (Stream<Path> files = Files.list(BASE)) {
      for (Path f : files.toList()) {
        Files.copy(f, base.resolve(f.getFileName()));
      }
    }
    Files.writeString(overlay.resolve("kustomization.yaml"), """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        namespace: gpu-system
        resources:
          - ../base
        images:
          - name: registry.example.com/shmguard
            newName: registry.internal:5000/ops/shmguard
            newTag: "0.1.0"
        """);
    List<JsonNode> objects = build(overlay);

    assertThat(daemonSet(objects).at("/spec/template/spec/containers/0/image").asText())
        .isEqualTo("registry.internal:5000/ops/shmguard:0.1.0");
    assertThat(only(objects, "Namespace").at("/metadata/name").asText()).isEqualTo("gpu-system");
    assertThat(objects).filteredOn(o -> !o.path("kind").asText().equals("Namespace"))
        .allSatisfy(o -> assertThat(o.at("/metadata/namespace").asText()).isEqualTo("gpu-system"));
    assertThat(validate(JSON.valueToTree(objects))).doesNotContain("INVALID");
  }

  @Test
  void theBaseNamesItsImageThroughKustomizeImages() throws Exception {
    assertThat(Files.readString(BASE.resolve("daemonset.yaml"))).contains("image: shmguard\n");
    assertThat(daemonSet(build(BASE)).at("/spec/template/spec/containers/0/image").asText())
        .isEqualTo("registry.example.com/shmguard:0.1.0");
  }

  @Test
  void theAdviceExamplePodLandsWhereShmguardRunsAndMountsItsSocketDirectory() throws Exception {
    JsonNode ds = daemonSet(build(BASE)).at("/spec/template/spec");
    JsonNode example = KustomizeBuild.documents(Files.readString(DIR.resolve("advice-client-example.yaml"))).get(0);
    JsonNode pod = example.path("spec");
    JsonNode c = pod.at("/containers/0");

    assertThat(pod.at("/nodeSelector/nvidia.com~1gpu.present").asText())
        .isEqualTo(ds.at("/nodeSelector/nvidia.com~1gpu.present").asText());
    JsonNode m = hostPathMount(pod, c, "/run/shmguard");
    assertThat(m.path("mountPath").asText()).isEqualTo("/run/shmguard");
    assertThat(m.path("readOnly").asBoolean()).isTrue();
  }

  private static JsonNode daemonSet(List<JsonNode> objects) {
    return only(objects, "DaemonSet");
  }

  private static JsonNode only(List<JsonNode> objects, String kind) {
    List<JsonNode> found = objects.stream().filter(o -> o.path("kind").asText().equals(kind)).toList();
    assertThat(found).as("one " + kind).hasSize(1);
    return found.get(0);
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

  /** The kustomization in {@code dir} as kubectl apply -k would send it. */
  private static List<JsonNode> build(Path dir) throws IOException {
    Optional<String> kubectl = kubectl();
    return kubectl.isPresent() ? kubectlBuild(kubectl.get(), dir) : KustomizeBuild.build(dir);
  }

  private static List<JsonNode> kubectlBuild(String kubectl, Path dir) throws IOException {
    return KustomizeBuild.documents(Cmd.run(kubectl, "kustomize", dir.toString()));
  }

  /** A kubectl on PATH whose kustomize is v4 or later (directories in resources), if any. */
  static Optional<String> kubectl() {
    for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
      Path k = Path.of(d.isEmpty() ? "." : d, "kubectl");
      if (Files.isExecutable(k)) {
        Cmd.Result r = Cmd.exec(k.toString(), "version", "--client");
        Matcher m = KUSTOMIZE_VERSION.matcher(r.out());
        return r.status() == 0 && m.find() && Integer.parseInt(m.group(1)) >= 4 ? Optional.of(k.toString()) : Optional.empty();
      }
    }
    return Optional.empty();
  }

  /** The objects by kind, namespace and name (kustomize orders them by kind; fields in any order are equal). */
  private static Map<String, JsonNode> byName(List<JsonNode> objects) {
    Map<String, JsonNode> m = new TreeMap<>();
    for (JsonNode o : objects) {
      assertThat(m.put(o.path("kind").asText() + "/" + o.at("/metadata/namespace").asText() + "/" + o.at("/metadata/name").asText(), o))
          .as("one object of each name").isNull();
    }
    return m;
  }

  /** The validator's report on {@code objects} (a JSON array). */
  private static String validate(Object objects) throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/node")), "node is not installed");
    assumeTrue(Files.isDirectory(VALIDATOR.resolve("node_modules/@kubernetes/client-node")),
        "the validator is not installed: npm ci --prefix src/test/k8s-validate (.ci/run does)");
    Process p = new ProcessBuilder("node", "validate.mjs").directory(VALIDATOR.toFile()).redirectErrorStream(true).start();
    try (OutputStream in = p.getOutputStream()) {
      in.write(JSON.writeValueAsBytes(objects));
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return out;
  }
}
