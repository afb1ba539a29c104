package org.shmguard.host;

import java.io.IOException;
import org.shmguard.nativ.MountCalls;
import org.shmguard.nativ.MountCalls.NsId;

/**
 * Who owns a mount namespace: the user namespace the kernel names for it (ioctl NS_GET_USERNS on
 * /proc/PID/ns/mnt), compared with the host's (shmguard's own, or PID 1's with a host root).
 * Any user can make a user namespace and, in it, a mount namespace with whatever mounts and
 * chroot it likes; such a namespace is evidence of nothing, so it is only reported unless the
 * configuration opts in.
 *
 * <pre>{@code
 * String why = new NsOwners(paths, "self", false).problem(pid);   // null: owned by the host's user namespace
 * }</pre>
 */
final class NsOwners {
  private final HostPaths paths;
  private final boolean actInUserNamespaces;
  private final NsId host;
  private final String hostProblem;

  NsOwners(HostPaths paths, String referencePid, boolean actInUserNamespaces) {
    this.paths = paths;
    this.actInUserNamespaces = actInUserNamespaces;
    NsId id = null;
    String problem = null;
    try {
      id = MountCalls.get().namespaceOf(paths.proc(referencePid, "ns", "user").toString());
    } catch (IOException e) {
      problem = "the host's user namespace cannot be read (" + e.getMessage() + ")";
    }
    this.host = id;
    this.hostProblem = problem;
  }

  /**
   * Whether the mount namespace of {@code pid} is owned by a user namespace other than the host's,
   * or its owner cannot be told: one any user can make, whatever the configuration opts in to.
   */
  boolean foreign(int pid) {
    if (host == null) {
      return true;
    }
    try {
      return !MountCalls.get().ownerOfMountNamespace(paths.proc(Integer.toString(pid), "ns", "mnt").toString()).equals(host);
    } catch (IOException e) {
      return true;
    }
  }

  /** Why shmguard may not act in the mount namespace of {@code pid}, or null when it may. */
  String problem(int pid) {
    if (actInUserNamespaces) {
      return null;
    }
    if (host == null) {
      return hostProblem;
    }
    String ns = paths.proc(Integer.toString(pid), "ns", "mnt").toString();
    try {
      NsId owner = MountCalls.get().ownerOfMountNamespace(ns);
      if (owner.equals(host)) {
        return null;
      }
      return "its mount namespace is owned by user namespace " + owner.ino() + ", not the host's (" + host.ino()
          + "): an ordinary user can make one (set namespaces.actInUserNamespaces to act in it)";
    } catch (IOException e) {
      return "the owner of its mount namespace cannot be told (" + e.getMessage() + ")";
    }
  }
}
