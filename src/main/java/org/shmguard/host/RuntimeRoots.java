package org.shmguard.host;

import java.util.List;
import java.util.Objects;

/**
 * Where the container runtimes keep, on the host, the shm tmpfs they mount for pods and containers
 * (the {@code runtimes} configuration section): kubelet's root directory (its {@code --root-dir})
 * and pod log directory, Docker's data root, and the storage roots of podman and CRI-O
 * (containers/storage: its graph root, and CRI-O's run root). "" (or no storage root) leaves that
 * runtime out.
 *
 * <pre>{@code
 * RuntimeRoots roots = RuntimeRoots.DEFAULTS;   // /var/lib/kubelet, /var/log/pods, /var/lib/docker, ...
 * }</pre>
 */
public record RuntimeRoots(String kubeletRoot, String podLogs, String dockerRoot, List<String> containerStorage) {
  /** The shipped defaults: each runtime's own default paths. */
  public static final RuntimeRoots DEFAULTS = new RuntimeRoots("/var/lib/kubelet", "/var/log/pods", "/var/lib/docker",
      List.of("/var/lib/containers/storage", "/run/containers/storage"));
  /** No runtime's volumes looked for. */
  public static final RuntimeRoots NONE = new RuntimeRoots("", "", "", List.of());

  public RuntimeRoots {
    Objects.requireNonNull(kubeletRoot, "kubeletRoot");
    Objects.requireNonNull(podLogs, "podLogs");
    Objects.requireNonNull(dockerRoot, "dockerRoot");
    containerStorage = List.copyOf(containerStorage);
    for (String root : concat(kubeletRoot, podLogs, dockerRoot, containerStorage)) {
      if (!root.isEmpty() && (!root.startsWith("/") || root.endsWith("/"))) {
        throw new IllegalArgumentException("a runtime root must be an absolute path without a trailing /: " + root);
      }
    }
  }

  private static List<String> concat(String a, String b, String c, List<String> more) {
    List<String> all = new java.util.ArrayList<>(List.of(a, b, c));
    all.addAll(more);
    return all;
  }
}
