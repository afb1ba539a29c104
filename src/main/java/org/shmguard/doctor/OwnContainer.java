package org.shmguard.doctor;

import java.nio.file.Files;
import java.nio.file.Path;
import org.shmguard.host.HostPaths;

/**
 * Whether the root shmguard doctor looks at is a container's, by the marks the runtimes leave in
 * it: podman's {@code /run/.containerenv}, Docker's {@code /.dockerenv}. Run inside such a
 * container, the "/dev/shm of its own namespace" that the doctor finds is the container's tmpfs,
 * which the runtime made and sized: a remount from inside needs CAP_SYS_ADMIN, an fstab line
 * means nothing there, and the lasting fix is the container's --shm-size. A Kubernetes pod under
 * containerd or CRI-O carries neither mark and is not told apart from a host.
 */
final class OwnContainer {
  private OwnContainer() {}

  /** "podman" or "docker" when the root under {@code paths} carries that runtime's mark, else null. */
  static String runtime(HostPaths paths) {
    if (Files.exists(Path.of(paths.resolve("/run/.containerenv")))) {
      return "podman";
    }
    if (Files.exists(Path.of(paths.resolve("/.dockerenv")))) {
      return "docker";
    }
    return null;
  }
}
