package org.shmguard.model;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Whose shm tmpfs a mount is: a Kubernetes pod (namespace, name, uid, and the emptyDir volume's
 * name) or a container (its runtime, id and name). Values that were not found are null; a pod is
 * always known by its uid and a container by its id, since both are read from the very path the
 * runtime mounted the tmpfs at. Names come from files only root writes, and are checked again
 * here against what Kubernetes and the runtimes allow, so that no text of odd shape reaches a
 * journal field or a metrics label.
 *
 * <pre>{@code
 * Workload w = Workload.pod("a3c1...-...", "dshm").named("training", "llama-0");
 * w.label();      // "pod:a3c1...", the same as ContainerLabel gives the pod's processes
 * w.describe();   // "pod training/llama-0"
 * }</pre>
 *
 * @param runtime "kubernetes" (a kubelet volume), "docker", "podman", or "crio" (a container of
 *     podman's and CRI-O's storage that CRI-O made for a pod: its name gives the pod)
 * @param volume the emptyDir volume's name (Kubernetes only)
 */
public record Workload(String runtime, String podNamespace, String podName, String podUid, String volume,
    String containerId, String containerName) {
  private static final Pattern UID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  private static final Pattern ID = Pattern.compile("[0-9a-f]{64}");
  /** A DNS-1123 label: a namespace, an emptyDir volume's name. */
  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
  /** A DNS-1123 subdomain: a pod's name. */
  private static final Pattern SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
  /** Docker's and podman's container names. */
  private static final Pattern CONTAINER_NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,252}");

  public static final String KUBERNETES = "kubernetes";
  public static final String DOCKER = "docker";
  public static final String PODMAN = "podman";
  public static final String CRIO = "crio";

  public Workload {
    if (!KUBERNETES.equals(runtime) && !DOCKER.equals(runtime) && !PODMAN.equals(runtime) && !CRIO.equals(runtime)) {
      throw new IllegalArgumentException("runtime must be kubernetes, docker, podman or crio: " + runtime);
    }
    if (KUBERNETES.equals(runtime) ? podUid == null : containerId == null) {
      throw new IllegalArgumentException(KUBERNETES.equals(runtime) ? "a pod needs its uid" : "a container needs its id");
    }
    require("podUid", podUid, UID);
    require("containerId", containerId, ID);
    require("podNamespace", podNamespace, LABEL);
    require("podName", podName, SUBDOMAIN);
    require("volume", volume, LABEL);
    require("containerName", containerName, CONTAINER_NAME);
  }

  private static void require(String field, String value, Pattern shape) {
    if (value != null && !shape.matcher(value).matches()) {
      throw new IllegalArgumentException(field + " is not of the form its runtime allows: " + value);
    }
  }

  /** Whether {@code value} is a valid pod uid (lower-case, as kubelet writes it in paths). */
  public static boolean isPodUid(String value) {
    return value != null && UID.matcher(value).matches();
  }

  /** Whether {@code value} is a 64-hex-digit container id. */
  public static boolean isContainerId(String value) {
    return value != null && ID.matcher(value).matches();
  }

  /** Whether {@code namespace} and {@code name} are a pod's namespace and name as Kubernetes allows them. */
  public static boolean isPodName(String namespace, String name) {
    return namespace != null && name != null && LABEL.matcher(namespace).matches() && SUBDOMAIN.matcher(name).matches();
  }

  /** Whether {@code name} is a container name as Docker and podman allow it. */
  public static boolean isContainerName(String name) {
    return name != null && CONTAINER_NAME.matcher(name).matches();
  }

  /** Whether {@code volume} is an emptyDir volume name as Kubernetes allows it. */
  public static boolean isVolumeName(String volume) {
    return volume != null && LABEL.matcher(volume).matches();
  }

  /** A pod's volume, known by the pod's uid alone (its namespace and name not yet read). */
  public static Workload pod(String uid, String volume) {
    return new Workload(KUBERNETES, null, null, uid.toLowerCase(Locale.ROOT), volume, null, null);
  }

  /** A container of {@code runtime} (docker or podman), known by its id alone. */
  public static Workload container(String runtime, String id) {
    return new Workload(runtime, null, null, null, null, id, null);
  }

  /** This pod with its namespace and name. */
  public Workload named(String namespace, String name) {
    return new Workload(runtime, namespace, name, podUid, volume, containerId, containerName);
  }

  /** This container of CRI-O's, as the pod {@code namespace}/{@code name} with {@code uid} it was made for. */
  public Workload ofPod(String namespace, String name, String uid) {
    return new Workload(CRIO, namespace, name, uid, volume, containerId, containerName);
  }

  /** This container with its name. */
  public Workload named(String name) {
    return new Workload(runtime, podNamespace, podName, podUid, volume, containerId, name);
  }

  /** Whether its name is known (a pod's namespace and name, a container's name). */
  public boolean hasName() {
    return podUid != null ? podName != null : containerName != null;
  }

  /**
   * The label host's ContainerLabel gives the processes of the same pod or container, which the
   * outputs already use: "pod:UID", "docker:ID12", "podman:ID12".
   */
  public String label() {
    return podUid != null ? "pod:" + podUid : runtime + ":" + containerId.substring(0, 12);
  }

  /** In words, for messages: "pod training/llama-0", "docker container trainer", or by uid or id when unnamed. */
  public String describe() {
    if (podUid != null) {
      return podName == null ? "pod uid " + podUid : "pod " + podNamespace + "/" + podName;
    }
    return runtime + " container " + (containerName == null ? containerId.substring(0, 12) : containerName);
  }

  /** Everything known, in words: "pod training/llama-0 (uid ..., emptyDir dshm)", "docker container trainer (id ...)". */
  public String details() {
    if (podUid != null) {
      return describe() + " (uid " + podUid + (volume == null ? "" : ", emptyDir " + volume)
          + (containerId == null ? "" : ", sandbox " + runtime + " container " + containerId) + ")";
    }
    return describe() + " (id " + containerId + ")";
  }
}
