package org.shmguard.model;

/** Why a mount is watched. */
public enum MountOrigin {
  /** The /dev/shm of shmguard's own mount namespace (the host's, when run as a service). */
  HOST,
  /** A tmpfs at /dev/shm in another mount namespace: a container or a pod. */
  NAMESPACE,
  /** A path named in the configuration. */
  CONFIGURED;

  public String label() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
