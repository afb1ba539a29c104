package org.shmguard.model;

/** Why a mount is watched. */
public enum MountOrigin {
  /** The /dev/shm of shmguard's own mount namespace (the host's, when run as a service). */
  HOST,
  /** A tmpfs at /dev/shm in another mount namespace: a container or a pod. */
  NAMESPACE,
  /** A path named in the configuration. */
  CONFIGURED,
  /**
   * A pod's or container's tmpfs found where its runtime mounted it on the host (a kubelet emptyDir,
   * Docker's or podman's per-container shm), whether or not any of its processes runs.
   */
  VOLUME;

  /** Whether mounts of this origin belong to a container or pod (not the host's own or a configured one). */
  public boolean ofContainer() {
    return this == NAMESPACE || this == VOLUME;
  }

  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
