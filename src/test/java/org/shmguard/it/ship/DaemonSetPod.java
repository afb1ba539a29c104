package org.shmguard.it.ship;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.Yaml;

/**
 * The DaemonSet's one container (packaging/kubernetes/base/daemonset.yaml) as `podman run`
 * options, translated the way the kubelet would set it up: its namespaces, user, capabilities,
 * read-only root, seccomp and no-new-privileges, limits, volumes (hostPath directories from a map
 * the test gives, the ConfigMap's files written to a directory, memory emptyDirs as tmpfs) and
 * its arguments. A field it does not know fails the translation, so that the manifest cannot gain
 * a setting the container test silently leaves out.
 */
final class DaemonSetPod {
  static final Path MANIFEST = Path.of("packaging/kubernetes/base/daemonset.yaml");
  static final Path CONFIG_MAP = Path.of("packaging/kubernetes/base/configmap.yaml");

  /** An httpGet probe: the path, the container port it names, and the kubelet's timings. */
  record HttpProbe(String path, int port, int initialDelaySeconds, int periodSeconds, int timeoutSeconds,
      int failureThreshold) {
    HttpProbe {
      if (!path.startsWith("/") || port <= 0 || periodSeconds <= 0 || timeoutSeconds <= 0 || failureThreshold <= 0) {
        throw new IllegalArgumentException("not an httpGet probe the test can run: " + path + " port " + port);
      }
    }
  }

  private final Map<String, Object> pod;
  private final Map<String, Object> container;

  private DaemonSetPod(Map<String, Object> pod, Map<String, Object> container) {
    this.pod = pod;
    this.container = container;
  }

  static DaemonSetPod load() {
    Map<String, Object> ds = yaml(MANIFEST);
    Map<String, Object> pod = map(map(map(ds, "spec"), "template"), "spec");
    List<Map<String, Object>> containers = list(pod, "containers");
    if (containers.size() != 1 || pod.containsKey("initContainers")) {
      throw new AssertionError("the test runs one container; the DaemonSet has " + containers.size());
    }
    // Scheduling and API fields have no counterpart in a container runtime; every other field
    // must be one the translation below handles.
    known(pod, "the pod spec", Set.of("serviceAccountName", "automountServiceAccountToken", "hostPID", "hostNetwork",
        "hostIPC", "priorityClassName", "nodeSelector", "tolerations", "terminationGracePeriodSeconds", "containers",
        "volumes"));
    known(containers.get(0), "the container", Set.of("name", "image", "imagePullPolicy", "args", "ports",
        "securityContext", "resources", "readinessProbe", "livenessProbe", "volumeMounts"));
    return new DaemonSetPod(pod, containers.get(0));
  }

  /**
   * The options for `podman run` (before the image). {@code hostPaths} maps each hostPath the
   * manifest names to the sandbox's directory that stands for it; ConfigMap volumes are written
   * under {@code work}, with {@code sandboxConfig} appended to shmguard.yaml.
   */
  List<String> podmanOptions(Map<String, Path> hostPaths, Path work, String sandboxConfig) {
    List<String> o = new ArrayList<>();
    // The pod's network namespace of its own (the test probes it there); not the host's.
    o.add(bool(pod, "hostNetwork") ? "--network=host" : "--network=none");
    o.add(bool(pod, "hostPID") ? "--pid=host" : "--pid=private");
    if (bool(pod, "hostIPC")) {
      o.add("--ipc=host");
    }
    Map<String, Object> sc = map(container, "securityContext");
    known(sc, "securityContext", Set.of("runAsUser", "runAsNonRoot", "privileged", "allowPrivilegeEscalation",
        "readOnlyRootFilesystem", "seccompProfile", "capabilities"));
    if (bool(sc, "privileged")) {
      throw new AssertionError("a privileged container is not what the test runs");
    }
    o.add("--user=" + sc.get("runAsUser"));
    if (!bool(sc, "allowPrivilegeEscalation")) {
      o.add("--security-opt=no-new-privileges");
    }
    if (bool(sc, "readOnlyRootFilesystem")) {
      // The kubelet adds no tmpfs of its own to a read-only root; podman would (/tmp, /run, /var/tmp).
      o.add("--read-only");
      o.add("--read-only-tmpfs=false");
    }
    String seccomp = String.valueOf(map(sc, "seccompProfile").get("type"));
    if (!seccomp.equals("RuntimeDefault")) {
      throw new AssertionError("seccompProfile " + seccomp + ": the test knows RuntimeDefault (podman's default profile)");
    }
    Map<String, Object> caps = map(sc, "capabilities");
    for (Object c : list(caps, "drop")) {
      o.add("--cap-drop=" + c);
    }
    for (Object c : list(caps, "add")) {
      o.add("--cap-add=" + c);
    }
    Map<String, Object> limits = map(map(container, "resources"), "limits");
    o.add("--memory=" + memory(String.valueOf(limits.get("memory"))));
    o.add("--cpus=" + cpus(String.valueOf(limits.get("cpu"))));

    Map<String, Map<String, Object>> volumes = new LinkedHashMap<>();
    for (Map<String, Object> v : DaemonSetPod.<Map<String, Object>>list(pod, "volumes")) {
      volumes.put(String.valueOf(v.get("name")), v);
    }
    for (Map<String, Object> m : DaemonSetPod.<Map<String, Object>>list(container, "volumeMounts")) {
      known(m, "volumeMount", Set.of("name", "mountPath", "readOnly", "mountPropagation"));
      Map<String, Object> v = volumes.get(String.valueOf(m.get("name")));
      String target = String.valueOf(m.get("mountPath"));
      List<String> opts = new ArrayList<>();
      opts.add(bool(m, "readOnly") ? "ro" : "rw");
      Object propagation = m.get("mountPropagation");
      if ("HostToContainer".equals(propagation)) {
        opts.add("rslave");
      } else if (propagation != null && !"None".equals(propagation)) {
        throw new AssertionError("mountPropagation " + propagation + ": the test knows HostToContainer and None");
      }
      if (v.containsKey("hostPath")) {
        String node = String.valueOf(map(v, "hostPath").get("path"));
        Path source = hostPaths.get(node);
        if (source == null) {
          throw new AssertionError("no sandbox directory given for hostPath " + node);
        }
        o.add("--volume=" + source + ":" + target + ":" + String.join(",", opts));
      } else if (v.containsKey("configMap")) {
        Path dir = work.resolve("configmap-" + m.get("name"));
        writeConfigMap(String.valueOf(map(v, "configMap").get("name")), dir, sandboxConfig);
        o.add("--volume=" + dir + ":" + target + ":" + String.join(",", opts));
      } else if (v.containsKey("emptyDir") && "Memory".equals(map(v, "emptyDir").get("medium"))) {
        o.add("--tmpfs=" + target + ":rw,size=" + memory(String.valueOf(map(v, "emptyDir").get("sizeLimit"))));
      } else {
        throw new AssertionError("volume " + v.get("name") + ": the test knows hostPath, configMap and memory emptyDir");
      }
    }
    o.add("--stop-timeout=" + pod.get("terminationGracePeriodSeconds"));
    return o;
  }

  /** The container's args (the image's CMD is replaced, its ENTRYPOINT kept). */
  List<String> args() {
    if (container.containsKey("command")) {
      throw new AssertionError("the DaemonSet now sets command: the test passes only args");
    }
    return DaemonSetPod.<Object>list(container, "args").stream().map(String::valueOf).toList();
  }

  HttpProbe readinessProbe() {
    return probe("readinessProbe");
  }

  HttpProbe livenessProbe() {
    return probe("livenessProbe");
  }

  int terminationGracePeriodSeconds() {
    return ((Number) pod.get("terminationGracePeriodSeconds")).intValue();
  }

  private HttpProbe probe(String key) {
    Map<String, Object> p = map(container, key);
    Map<String, Object> get = map(p, "httpGet");
    Object port = get.get("port");
    int number = port instanceof Number n ? n.intValue() : namedPort(String.valueOf(port));
    return new HttpProbe(String.valueOf(get.get("path")), number, intOr(p, "initialDelaySeconds", 0),
        intOr(p, "periodSeconds", 10), intOr(p, "timeoutSeconds", 1), intOr(p, "failureThreshold", 3));
  }

  private int namedPort(String name) {
    for (Map<String, Object> p : DaemonSetPod.<Map<String, Object>>list(container, "ports")) {
      if (name.equals(p.get("name"))) {
        return ((Number) p.get("containerPort")).intValue();
      }
    }
    throw new AssertionError("no container port named " + name);
  }

  private static void writeConfigMap(String name, Path dir, String sandboxConfig) {
    Map<String, Object> cm = yaml(CONFIG_MAP);
    if (!name.equals(map(cm, "metadata").get("name"))) {
      throw new AssertionError("the DaemonSet mounts ConfigMap " + name + ", " + CONFIG_MAP + " is another");
    }
    try {
      Files.createDirectories(dir);
      for (Map.Entry<String, Object> e : map(cm, "data").entrySet()) {
        String text = String.valueOf(e.getValue());
        Files.writeString(dir.resolve(e.getKey()), e.getKey().equals("shmguard.yaml") ? text + sandboxConfig : text);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Kubernetes memory quantities as podman takes them: 256Mi is 256m. */
  static String memory(String quantity) {
    if (quantity.matches("[0-9]+Mi")) {
      return quantity.substring(0, quantity.length() - 2) + "m";
    }
    if (quantity.matches("[0-9]+Gi")) {
      return quantity.substring(0, quantity.length() - 2) + "g";
    }
    throw new AssertionError("memory quantity " + quantity + ": the test knows Mi and Gi");
  }

  /** Kubernetes CPU quantities as podman takes them: 500m is 0.5. */
  static String cpus(String quantity) {
    if (quantity.matches("[0-9]+m")) {
      return String.valueOf(Integer.parseInt(quantity.substring(0, quantity.length() - 1)) / 1000.0);
    }
    if (quantity.matches("[0-9]+")) {
      return quantity;
    }
    throw new AssertionError("cpu quantity " + quantity);
  }

  private static void known(Map<String, Object> m, String what, Set<String> keys) {
    for (String k : m.keySet()) {
      if (!keys.contains(k)) {
        throw new AssertionError(what + " has " + k + ", which the container test does not translate yet");
      }
    }
  }

  private static Map<String, Object> yaml(Path file) {
    try {
      return new Yaml().load(Files.readString(file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static boolean bool(Map<String, Object> m, String key) {
    return Boolean.TRUE.equals(m.get(key));
  }

  private static int intOr(Map<String, Object> m, String key, int otherwise) {
    Object v = m.get(key);
    return v == null ? otherwise : ((Number) v).intValue();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> m, String key) {
    Object v = m.get(key);
    if (!(v instanceof Map)) {
      throw new AssertionError("expected a mapping at " + key);
    }
    return (Map<String, Object>) v;
  }

  @SuppressWarnings("unchecked")
  private static <T> List<T> list(Map<String, Object> m, String key) {
    Object v = m.get(key);
    return v == null ? List.of() : (List<T>) v;
  }
}
