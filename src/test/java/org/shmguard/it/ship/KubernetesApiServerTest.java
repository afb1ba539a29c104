package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.ApiServerCluster;
import org.shmguard.testing.Cmd;

/**
 * The Kubernetes manifests applied with {@code kubectl apply} to a real kube-apiserver (Debian
 * 12's kubernetes 1.20.2, built from its source package, on Debian's etcd; see
 * {@link ApiServerCluster}) whose admission plugins judge them: NamespaceLifecycle, Priority and
 * ResourceQuota, with the critical priority classes limited to namespaces whose quota selects them
 * (ResourceQuota's limitedResources, as GKE configures it for kube-system).
 *
 * <p>kubectl is a kubectl on PATH with kustomize v4 or later ({@code apply -k}) where one is
 * installed, and otherwise Debian's kubectl 1.20 built beside the apiserver ({@code apply -f} of
 * {@link KustomizeBuild}'s output: its kustomize cannot build the base). No controller manager,
 * scheduler or kubelet runs: no DaemonSet controller makes pods, so the tests create the
 * DaemonSet's pod from its template, and it stays Pending; the ResourceQuota's first status (hard
 * and used, which the controller manager's quota controller writes within seconds on a real
 * cluster) is written by the test.
 */
class KubernetesApiServerTest {
  private static final Path DIR = Path.of("packaging/kubernetes");
  private static final Path BASE = DIR.resolve("base");
  private static final Path WITH_PODMONITOR = DIR.resolve("prometheus-operator");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  /** The Priority admission plugin's value for system-node-critical. */
  private static final int SYSTEM_NODE_CRITICAL = 2000001000;
  /** The cluster's ResourceQuota admission configuration: the critical classes only where a quota selects them. */
  static final String CRITICAL_CLASSES_QUOTA_SCOPED = """
      apiVersion: apiserver.config.k8s.io/v1
      kind: AdmissionConfiguration
      plugins:
        - name: ResourceQuota
          configuration:
            apiVersion: apiserver.config.k8s.io/v1
            kind: ResourceQuotaConfiguration
            limitedResources:
              - resource: pods
                matchScopes:
                  - scopeName: PriorityClass
                    operator: In
                    values: ["system-node-critical", "system-cluster-critical"]
      """;

  private static ApiServerCluster cluster;
  private static Path binaries;
  private static String baseApplied;

  @BeforeAll
  static void startClusterAndApplyTheBase() throws Exception {
    binaries = ApiServerCluster.binaries();
    cluster = ApiServerCluster.start(binaries, CRITICAL_CLASSES_QUOTA_SCOPED);
    // Which kubectl applied, for the test's log.
    System.out.println("kubectl: " + String.join(" ", Cmd.run(kubectlCommand("version", "--client")).lines()
        .filter(l -> l.startsWith("Client Version") || l.startsWith("Kustomize Version")).toList())
        + (KubernetesManifestsTest.kubectl().isPresent() ? " (apply -k)" : " (apply -f of KustomizeBuild's output)"));
    baseApplied = apply(BASE).out();
    actAsTheQuotaController("shmguard", "shmguard-critical-pods");
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theApiServerIsDebians120() throws Exception {
    assertThat(cluster.get("/version").path("gitVersion").asText()).isEqualTo("v1.20.2");
  }

  @Test
  void etcdAndTheClustersKeysAreTheTestsAlone() throws Exception {
    Cmd.Result asNobody = Cmd.exec("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
        "cat", cluster.dir().resolve("ca.key").toString());

    assertThatThrownBy(() -> cluster.etcdWithoutClientCertificate("/version")).as("etcd wants a client certificate")
        .isInstanceOf(IOException.class);
    assertThat(asNobody.status()).isNotZero();
    assertThat(asNobody.err()).contains("Permission denied");
  }

  @Test
  void theBaseAppliesAndTheClusterStoresEveryObjectAsShipped() throws Exception {
    assertThat(baseApplied).contains("namespace/shmguard created", "serviceaccount/shmguard created",
        "resourcequota/shmguard-critical-pods created", "configmap/shmguard created", "service/shmguard created",
        "daemonset.apps/shmguard created", "networkpolicy.networking.k8s.io/shmguard created");

    JsonNode ns = cluster.get("/api/v1/namespaces/shmguard");
    JsonNode sa = cluster.get("/api/v1/namespaces/shmguard/serviceaccounts/shmguard");
    JsonNode ds = cluster.get("/apis/apps/v1/namespaces/shmguard/daemonsets/shmguard");
    JsonNode np = cluster.get("/apis/networking.k8s.io/v1/namespaces/shmguard/networkpolicies/shmguard");
    JsonNode quota = cluster.get("/api/v1/namespaces/shmguard/resourcequotas/shmguard-critical-pods");

    assertThat(ns.at("/status/phase").asText()).isEqualTo("Active");
    // Stored, not enforced: 1.20 has no PodSecurity admission (it came in 1.23).
    assertThat(ns.at("/metadata/labels/pod-security.kubernetes.io~1enforce").asText()).isEqualTo("privileged");
    assertThat(sa.path("automountServiceAccountToken").asBoolean(true)).isFalse();
    JsonNode shipped = objects(BASE).stream().filter(o -> o.path("kind").asText().equals("DaemonSet")).findFirst().orElseThrow();
    assertThat(ds.at("/spec/template/spec/containers/0/image")).isEqualTo(shipped.at("/spec/template/spec/containers/0/image"));
    assertThat(ds.at("/spec/template/spec/hostPID").asBoolean()).isTrue();
    assertThat(ds.at("/spec/template/spec/containers/0/securityContext"))
        .isEqualTo(shipped.at("/spec/template/spec/containers/0/securityContext"));
    assertThat(ds.at("/spec/template/spec/containers/0/securityContext/capabilities/add").toString())
        .isEqualTo("[\"SYS_PTRACE\",\"FOWNER\",\"LEASE\",\"DAC_READ_SEARCH\",\"DAC_OVERRIDE\"]");
    assertThat(ds.at("/status/desiredNumberScheduled").asInt(-1)).as("no DaemonSet controller, no nodes").isIn(-1, 0);
    assertThat(np.at("/spec/policyTypes").toString()).isEqualTo("[\"Ingress\",\"Egress\"]");
    assertThat(np.at("/spec/egress").isMissingNode() || np.at("/spec/egress").isEmpty()).as("no egress rule").isTrue();
    assertThat(np.at("/spec/ingress/0/ports/0/port").asText()).isEqualTo("metrics");
    assertThat(quota.at("/spec/scopeSelector/matchExpressions/0/values").toString()).isEqualTo("[\"system-node-critical\"]");
  }

  @Test
  void theDaemonSetsCriticalPodIsAdmittedThroughTheShippedQuotaAndStaysPending() throws Exception {
    HttpResponse<String> r = cluster.request("POST", "/api/v1/namespaces/shmguard/pods", daemonSetPod("shmguard-pod-admitted"));

    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    JsonNode pod = JSON.readTree(r.body());
    assertThat(pod.at("/spec/priorityClassName").asText()).isEqualTo("system-node-critical");
    assertThat(pod.at("/spec/priority").asInt()).as("resolved by the Priority plugin").isEqualTo(SYSTEM_NODE_CRITICAL);
    assertThat(pod.at("/spec/preemptionPolicy").asText()).isEqualTo("PreemptLowerPriority");
    JsonNode stored = cluster.get("/api/v1/namespaces/shmguard/pods/shmguard-pod-admitted");
    assertThat(stored.at("/status/phase").asText()).as("no scheduler or kubelet here").isEqualTo("Pending");
    assertThat(stored.at("/spec/nodeName").asText()).isEmpty();
    // The quota charged it: ResourceQuota admission counts the pod in the quota's status.
    JsonNode quota = cluster.get("/api/v1/namespaces/shmguard/resourcequotas/shmguard-critical-pods");
    assertThat(quota.at("/status/used/pods").asInt()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void theSameCriticalPodIsRefusedInANamespaceWithoutTheQuota() throws Exception {
    createNamespace("shmguard-without-quota");

    HttpResponse<String> critical = cluster.request("POST", "/api/v1/namespaces/shmguard-without-quota/pods",
        daemonSetPod("shmguard-pod-refused"));
    ObjectNode ordinary = daemonSetPod("ordinary-pod");
    ((ObjectNode) ordinary.get("spec")).remove("priorityClassName");
    HttpResponse<String> ordinaryAnswer = cluster.request("POST", "/api/v1/namespaces/shmguard-without-quota/pods", ordinary);

    // Refused, with 500 rather than 403: 1.20's quota admission returns this refusal as a plain
    // error, not as Forbidden.
    assertThat(critical.statusCode()).as(critical.body()).isEqualTo(500);
    assertThat(JSON.readTree(critical.body()).path("message").asText()).contains(
        "insufficient quota to match these scopes: [{PriorityClass In [system-node-critical system-cluster-critical]}]");
    assertThat(ordinaryAnswer.statusCode()).as("only the critical class is limited: " + ordinaryAnswer.body()).isEqualTo(201);
  }

  @Test
  void beforeTheQuotaControllerWritesItsStatusTheQuotaAdmitsButCountsNothing() throws Exception {
    createNamespace("shmguard-fresh-quota");
    ObjectNode quota = (ObjectNode) objects(BASE).stream().filter(o -> o.path("kind").asText().equals("ResourceQuota"))
        .findFirst().orElseThrow();
    ((ObjectNode) quota.get("metadata")).put("namespace", "shmguard-fresh-quota");
    HttpResponse<String> q = cluster.request("POST", "/api/v1/namespaces/shmguard-fresh-quota/resourcequotas", quota);
    assertThat(q.statusCode()).as(q.body()).isEqualTo(201);

    HttpResponse<String> r = cluster.request("POST", "/api/v1/namespaces/shmguard-fresh-quota/pods", daemonSetPod("shmguard-pod-early"));

    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    JsonNode stored = cluster.get("/api/v1/namespaces/shmguard-fresh-quota/resourcequotas/shmguard-critical-pods");
    assertThat(stored.at("/status/used/pods").isMissingNode()).as(stored.toString()).isTrue();
  }

  @Test
  void anUnknownFieldIsRefusedByKubectlFromTheServersSchemaAndDroppedByThe120Server() throws Exception {
    ObjectNode ds = (ObjectNode) objects(BASE).stream().filter(o -> o.path("kind").asText().equals("DaemonSet")).findFirst().orElseThrow();
    ((ObjectNode) ds.get("metadata")).put("name", "shmguard-misspelled").put("namespace", "shmguard");
    ((ObjectNode) ds.at("/spec/template/spec/containers/0")).put("imagePulPolicy", "Always");
    Path file = cluster.dir().resolve("misspelled.yaml");
    YAML.writeValue(file.toFile(), ds);

    Cmd.Result byKubectl = kubectl("apply", "--validate=true", "-f", file.toString());
    int afterKubectl = cluster.request("GET", "/apis/apps/v1/namespaces/shmguard/daemonsets/shmguard-misspelled", null).statusCode();
    // As kubectl 1.25 and later send it, asking for strict server-side validation.
    HttpResponse<String> byServer = cluster.request("POST", "/apis/apps/v1/namespaces/shmguard/daemonsets?fieldValidation=Strict", ds);

    assertThat(byKubectl.status()).as(byKubectl.out()).isNotZero();
    // kubectl's own validation (1.20's and 1.32's alike against this server), not a server's answer:
    assertThat(byKubectl.err()).contains("error validating data: ValidationError(DaemonSet.spec.template.spec.containers[0]): "
        + "unknown field \"imagePulPolicy\"");
    assertThat(afterKubectl).as("kubectl created nothing").isEqualTo(404);
    // kube-apiserver 1.20 has no server-side field validation (1.25 added it): asked for strict
    // validation, it ignores the request and stores the object without the field. The refusal
    // above is kubectl's, made on the client from the server's OpenAPI.
    assertThat(byServer.statusCode()).as(byServer.body()).isEqualTo(201);
    assertThat(JSON.readTree(byServer.body()).at("/spec/template/spec/containers/0").has("imagePulPolicy")).isFalse();
  }

  @Test
  void thePrometheusOperatorOverlayIsRefusedWithoutItsCrdAndAppliesWithIt() throws Exception {
    Cmd.Result withoutCrd = apply(WITH_PODMONITOR);
    assertThat(withoutCrd.status()).isNotZero();
    assertThat(withoutCrd.err()).contains("PodMonitor");

    Path crd = cluster.dir().resolve("podmonitor-crd.yaml");
    Files.writeString(crd, PODMONITOR_CRD);
    Cmd.run(kubectlCommand("apply", "-f", crd.toString()));
    Cmd.run(kubectlCommand("wait", "--for=condition=Established", "--timeout=60s", "crd/podmonitors.monitoring.coreos.com"));
    Cmd.Result withCrd = apply(WITH_PODMONITOR);

    assertThat(withCrd.status()).as(withCrd.err()).isZero();
    assertThat(withCrd.out()).contains("podmonitor.monitoring.coreos.com/shmguard created");
    JsonNode pm = cluster.get("/apis/monitoring.coreos.com/v1/namespaces/shmguard/podmonitors/shmguard");
    assertThat(pm.at("/spec/podMetricsEndpoints/0/port").asText()).isEqualTo("metrics");
  }

  @Test
  void theNodeProblemDetectorManifestAppliesWithItsClusterRoleBinding() throws Exception {
    Cmd.Result r = kubectl("apply", "--validate=true", "-f", DIR.resolve("node-problem-detector.yaml").toString());

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.out()).contains("clusterrolebinding.rbac.authorization.k8s.io/shmguard-node-problem-detector created");
    JsonNode binding = cluster.get("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/shmguard-node-problem-detector");
    assertThat(binding.at("/roleRef/name").asText()).isEqualTo("system:node-problem-detector");
    // The role it binds is one the apiserver makes itself (bootstrap RBAC).
    assertThat(cluster.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:node-problem-detector")
        .at("/metadata/labels/kubernetes.io~1bootstrapping").asText()).isEqualTo("rbac-defaults");
  }

  /**
   * A stand-in for the Prometheus Operator's PodMonitor CRD (the real one is not available
   * offline): the group, version, kind and names it has, and a structural schema of the fields
   * shmguard's PodMonitor uses, with unknown fields pruned as in any structural CRD.
   */
  private static final String PODMONITOR_CRD = """
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata:
        name: podmonitors.monitoring.coreos.com
      spec:
        group: monitoring.coreos.com
        scope: Namespaced
        names: {kind: PodMonitor, listKind: PodMonitorList, plural: podmonitors, singular: podmonitor}
        versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                properties:
                  spec:
                    type: object
                    required: [selector]
                    properties:
                      selector:
                        type: object
                        properties:
                          matchLabels: {type: object, additionalProperties: {type: string}}
                      podMetricsEndpoints:
                        type: array
                        items:
                          type: object
                          properties:
                            port: {type: string}
                            path: {type: string}
                            interval: {type: string}
                            scrapeTimeout: {type: string}
      """;

  /** The DaemonSet's pod template as a Pod named {@code name}: what its controller would create. */
  private static ObjectNode daemonSetPod(String name) throws IOException {
    JsonNode ds = objects(BASE).stream().filter(o -> o.path("kind").asText().equals("DaemonSet")).findFirst().orElseThrow();
    ObjectNode pod = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Pod");
    ObjectNode meta = ((ObjectNode) ds.at("/spec/template/metadata")).deepCopy();
    meta.put("name", name);
    pod.set("metadata", meta);
    pod.set("spec", ds.at("/spec/template/spec").deepCopy());
    return pod;
  }

  private static void createNamespace(String name) throws IOException {
    HttpResponse<String> r = cluster.request("POST", "/api/v1/namespaces",
        JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Namespace").set("metadata", JSON.createObjectNode().put("name", name)));
    assertThat(r.statusCode()).as(r.body()).isIn(201, 409);
  }

  /**
   * Writes the quota's first status as the controller manager's quota controller does (hard from
   * the spec, usage counted: no pod exists in the namespace yet), since none runs here. From then
   * on ResourceQuota admission keeps the usage itself.
   */
  private static void actAsTheQuotaController(String namespace, String name) throws IOException {
    assertThat(cluster.get("/api/v1/namespaces/" + namespace + "/pods").path("items")).isEmpty();
    String path = "/api/v1/namespaces/" + namespace + "/resourcequotas/" + name;
    JsonNode quota = cluster.get(path);
    ObjectNode status = JSON.createObjectNode();
    status.set("hard", quota.at("/spec/hard"));
    ObjectNode used = status.putObject("used");
    quota.at("/spec/hard").fieldNames().forEachRemaining(r -> used.put(r, "0"));
    HttpResponse<String> r = cluster.request("PATCH", path + "/status", JSON.createObjectNode().set("status", status));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  /** The kustomization in {@code dir} applied as the chosen kubectl can (see the class comment). */
  private static Cmd.Result apply(Path dir) throws IOException {
    Optional<String> modern = KubernetesManifestsTest.kubectl();
    if (modern.isPresent()) {
      return kubectl("apply", "--validate=true", "-k", dir.toString());
    }
    Path built = cluster.dir().resolve(dir.getFileName() + ".yaml");
    StringBuilder yaml = new StringBuilder();
    for (JsonNode o : KustomizeBuild.build(dir)) {
      yaml.append("---\n").append(YAML.writeValueAsString(o).replaceFirst("^---\n", ""));
    }
    Files.writeString(built, yaml);
    return kubectl("apply", "--validate=true", "-f", built.toString());
  }

  private static Cmd.Result kubectl(String... args) {
    return Cmd.exec(kubectlCommand(args));
  }

  private static String[] kubectlCommand(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(KubernetesManifestsTest.kubectl().orElse(binaries.resolve("kubectl").toString()));
    // Its discovery cache in the sandbox, not in the machine's ~/.kube.
    cmd.addAll(List.of("--kubeconfig", cluster.kubeconfig().toString(), "--cache-dir", cluster.dir().resolve("kubectl-cache").toString()));
    cmd.addAll(List.of(args));
    return cmd.toArray(String[]::new);
  }

  private static List<JsonNode> objects(Path dir) throws IOException {
    return KustomizeBuild.build(dir);
  }
}
