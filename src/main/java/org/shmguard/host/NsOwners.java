package org.shmguard.host;

import java.io.IOException;
import org.shmguard.nativ.MountCalls;
import org.shmguard.nativ.MountCalls.NsId;

/**
 * Who owns a mount namespace: the user namespace the kernel names for it (ioctl NS_GET_USERNS on
 * /proc/PID/ns/mnt), compared with the host's (shmguard's own, or PID 1's with a host root).
 * Any user can make a user namespace and, in it, a mount namespace with whatever mounts and
 * chroot it likes; such a namespace is evidence of nothing, so it is only reported unless the
 * configuration opts in. The uid that made the owning user namespace is what such a mount is
 * reported under: it is that user's, not the host's.
 *
 * <pre>{@code
 * NsOwners.Owner o = new NsOwners(paths, "self", false).of(pid);   // o.problem() null: owned by the host's user namespace
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
   * Who owns the mount namespace of a process, as far as shmguard could tell.
   *
   * @param problem why shmguard may not act in it, or null when it may
   * @param uid the uid that made the user namespace owning it (0 for the host's), or null when unknown
   */
  record Owner(String problem, Long uid) {}

  /**
   * Whether the mount namespace of {@code pid} is owned by a user namespace other than the host's,
   * or its owner cannot be told: one any user can make, whatever the configuration opts in to.
   */
  boolean foreign(int pid) {
    if (host == null) {
      return true;
    }
    try {
      return !MountCalls.get().mountNamespaceOwner(paths.proc(Integer.toString(pid), "ns", "mnt").toString())
          .userNamespace().equals(host);
    } catch (IOException e) {
      return true;
    }
  }

  /** Why shmguard may not act in the mount namespace of {@code pid} (null when it may), and whose it is. */
  Owner of(int pid) {
    String ns = paths.proc(Integer.toString(pid), "ns", "mnt").toString();
    MountCalls.Owner owner;
    try {
      owner = MountCalls.get().mountNamespaceOwner(ns);
    } catch (IOException e) {
      return new Owner(actInUserNamespaces ? null : "the owner of its mount namespace cannot be told (" + e.getMessage() + ")",
          null);
    }
    if (actInUserNamespaces) {
      return new Owner(null, owner.uid());
    }
    if (host == null) {
      return new Owner(hostProblem, owner.uid());
    }
    if (owner.userNamespace().equals(host)) {
      return new Owner(null, owner.uid());
    }
    return new Owner("its mount namespace is owned by user namespace " + owner.userNamespace().ino()
        + (owner.uid() == null ? "" : " of uid " + owner.uid()) + ", not the host's (" + host.ino()
        + "): an ordinary user can make one (set namespaces.actInUserNamespaces to act in it)", owner.uid());
  }
}
