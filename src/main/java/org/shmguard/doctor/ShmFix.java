package org.shmguard.doctor;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;

/**
 * How to give a shm mount more room, in the terms of what made it: a remount and an fstab line for
 * the host's /dev/shm, --shm-size for a Docker or Podman container, a memory-backed emptyDir with a
 * sizeLimit for a Kubernetes pod (Kubernetes has no shm-size field, kubernetes #28272).
 */
final class ShmFix {
  private ShmFix() {}

  /** The kind of mount, as the fix depends on it. */
  enum Kind { HOST, DOCKER, PODMAN, CONTAINERD, POD, OTHER_CONTAINER }

  static Kind kindOf(ShmMount m) {
    String c = m.container();
    if (m.origin() != MountOrigin.NAMESPACE && (c == null || m.origin() == MountOrigin.HOST)) {
      return Kind.HOST;
    }
    if (c == null) {
      return Kind.OTHER_CONTAINER;
    }
    if (c.startsWith("pod:") || c.startsWith("crio:")) {
      return Kind.POD;
    }
    if (c.startsWith("docker:")) {
      return Kind.DOCKER;
    }
    if (c.startsWith("podman:")) {
      return Kind.PODMAN;
    }
    if (c.startsWith("containerd:")) {
      return Kind.CONTAINERD;
    }
    return Kind.OTHER_CONTAINER;
  }

  /**
   * Steps that give {@code m} {@code gib} GiB, as {@link #grow(ShmMount, long)}, except for the
   * doctor's own /dev/shm when it runs inside a container ({@code ownRuntime}, from
   * {@link OwnContainer}): that tmpfs is the container's, to be recreated larger, and grown for
   * now only from the host.
   */
  static List<String> grow(ShmMount m, long gib, String ownRuntime) {
    if (ownRuntime == null || kindOf(m) != Kind.HOST) {
      return grow(m, gib);
    }
    return List.of("this " + m.mountPoint() + " is this " + ownRuntime + " container's own: recreate the container with"
            + " more shared memory: " + ownRuntime + " run --shm-size=" + gib + "g ..."
            + (ownRuntime.equals("docker") ? "  (Compose: shm_size: \"" + gib + "gb\")" : ""),
        "for the running container, until it restarts: on the host, as root, shmguard doctor prints the remount"
            + " (one from inside needs CAP_SYS_ADMIN; an fstab line here is never read)");
  }

  /** Steps that give {@code m} {@code gib} GiB, the lasting one first, then relief for now. */
  static List<String> grow(ShmMount m, long gib) {
    List<String> fix = new ArrayList<>();
    switch (kindOf(m)) {
      case HOST -> {
        fix.add("mount -o remount,size=" + gib + "G " + m.mountPoint());
        fix.add("keep it across reboots with this line in /etc/fstab: tmpfs  " + m.mountPoint()
            + "  tmpfs  rw,nosuid,nodev,size=" + gib + "G  0  0");
        fix.add("stay well below the host's memory: the kernel cannot reclaim a full tmpfs, and one larger than memory can hang the host");
        return fix;
      }
      case DOCKER -> {
        fix.add("recreate the container with more shared memory: docker run --shm-size=" + gib + "g ...  (Compose: shm_size: \"" + gib + "gb\")");
        fix.add("or with the host's /dev/shm: docker run --ipc=host ...  (the host's /dev/shm must then hold the job's segments)");
      }
      case PODMAN -> fix.add("recreate the container with more shared memory: podman run --shm-size=" + gib + "g ...");
      case CONTAINERD -> fix.add("recreate the container with more shared memory: nerdctl run --shm-size=" + gib + "g ...");
      case POD -> {
        if (m.path().contains("kubernetes.io~empty-dir")) {
          fix.add("raise the sizeLimit of the memory-backed emptyDir the pod mounts at /dev/shm to " + gib + "Gi");
        } else {
          fix.add("mount a memory-backed emptyDir at /dev/shm in the pod spec (Kubernetes has no shm-size field):");
          fix.add("  volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: " + gib + "Gi}}]");
          fix.add("  containers[*].volumeMounts: [{name: dshm, mountPath: /dev/shm}]");
        }
        fix.add("the volume's pages count against the pod's memory limit: raise the limit by as much; its tmpfs outlives"
            + " container restarts, so a crash's leak stays until the pod goes (shmguard reaps it)");
      }
      case OTHER_CONTAINER -> fix.add("give the job's container a larger /dev/shm (--shm-size=" + gib + "g, or its runtime's equivalent)");
      default -> throw new IllegalStateException();
    }
    fix.add(remountLine(m, gib));
    return fix;
  }

  /**
   * The line about growing the running container's tmpfs now. None is suggested for a mount shmguard
   * only reports (a namespace an ordinary user made, a bind of a directory): an operator pasting
   * {@code nsenter -t PID -m mount ...} there would act in a view that user controls, whose
   * "/dev/shm" can be the host's own.
   */
  static String remountLine(ShmMount m, long gib) {
    if (m.reportOnly() != null) {
      return "no remount is suggested for the running container: " + m.reportOnly();
    }
    return "for the running container, until it restarts: " + remountNow(m, gib);
  }

  /** A remount that reaches this tmpfs from the host: directly where the runtime mounted it there, else through the namespace. */
  static String remountNow(ShmMount m, long gib) {
    String opts = "remount,size=" + gib + "G";
    if (!m.path().contains("/proc/") || m.pids().isEmpty()) {
      return "mount -o " + opts + " " + m.path();
    }
    return "nsenter -t " + m.pids().get(0) + " -m mount -o " + opts + " " + m.mountPoint();
  }
}
