package org.shmguard.advice;

/**
 * Who is on the other end of a connection, from SO_PEERCRED: its uid, whether it is root of the
 * host, its pid, and the mount namespace it was in when it connected.
 *
 * @param root whether it may ask what only root may: uid 0 in shmguard's own user, mount and PID
 *     namespaces ({@link PeerCheck}); root of a container without a user namespace is not
 * @param pid its pid as shmguard's PID namespace numbers it, 0 when unknown
 * @param notHostRoot for a uid 0 peer that is not root of the host, why not, as a clause ("it is
 *     root in another mount namespace"); null for every other peer
 * @param mountNamespace the inode number of its mount namespace ({@code /proc/PID/ns/mnt}), read at
 *     the accept: which /dev/shm an ADVISE without dev= is about; -1 when unknown
 */
public record Peer(String user, boolean root, int pid, String notHostRoot, long mountNamespace) {
  public Peer {
    if (root && notHostRoot != null) {
      throw new IllegalArgumentException("a peer that is root of the host has no reason not to be: " + notHostRoot);
    }
  }

  /** A peer whose mount namespace is unknown. */
  public Peer(String user, boolean root, int pid, String notHostRoot) {
    this(user, root, pid, notHostRoot, -1);
  }

  /** A peer whose pid is unknown. */
  public Peer(String user, boolean root) {
    this(user, root, 0, null);
  }

  /** The user SO_PEERCRED gives, as its uid: no user database is asked on the acceptor's thread. */
  static String uid(int uid) {
    return "uid " + Integer.toUnsignedString(uid);
  }

  /**
   * Whose request rate this connection counts against: its user's, except that uid 0 outside the
   * host's namespaces (every container's root together) has a bucket apart from the host's root.
   */
  String rateKey() {
    return notHostRoot == null ? user : "uid 0 outside shmguard's namespaces";
  }

  /** The user, and the pid when known, for the log. */
  String who() {
    return pid > 0 ? user + " (pid " + pid + ")" : user;
  }
}
