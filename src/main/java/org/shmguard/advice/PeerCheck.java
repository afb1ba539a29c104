package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import org.shmguard.host.HostRoot;
import org.shmguard.nativ.ErrnoException;
import org.shmguard.nativ.Pidfd;
import org.shmguard.nativ.ProcCalls;
import org.shmguard.nativ.SocketPeer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the {@link Peer} of an accepted connection, right after the accept: its uid and pid from
 * SO_PEERCRED, its mount namespace, and, for uid 0 only, whether it is root of the host
 * ({@link HostRoot}). No user name is looked up: a uid is all a connection is counted and logged by.
 *
 * <p>Which process the pid names is tied to the connection by a pidfd. On Linux 6.5 and later
 * the kernel gives it (SO_PEERPIDFD): the very process that connected. Before that, the pidfd is
 * opened by pid (pidfd_open), and the process must have started no later than this check began
 * (its start time in /proc/PID/stat against CLOCK_BOOTTIME, in clock ticks): a process that took a
 * dead peer's pid after that is refused. Either way {@link HostRoot} reads /proc/PID and then
 * checks that the pidfd's process was not reaped meanwhile. Anything that fails refuses root.
 * Used by the acceptor thread alone.
 */
final class PeerCheck implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PeerCheck.class);
  /** Null when shmguard's own namespaces could not be read: then no peer is root of the host. */
  private final HostRoot host;
  /** Null when /proc could not be opened: then no peer's mount namespace is known. */
  private final ProcCalls proc;

  private PeerCheck(HostRoot host, ProcCalls proc) {
    this.host = host;
    this.proc = proc;
  }

  static PeerCheck open() {
    ProcCalls proc;
    try {
      proc = ProcCalls.open("/proc");
    } catch (IOException e) {
      LOG.error("advice socket: cannot open /proc: {}; an ADVISE without dev= is refused", e.getMessage());
      proc = null;
    }
    HostRoot host;
    try {
      host = HostRoot.open();
    } catch (IOException e) {
      LOG.error("advice socket: {}; no client may ask REMOUNT, CLEAN or SCAN", e.getMessage());
      host = null;
    }
    return new PeerCheck(host, proc);
  }

  Peer of(SocketChannel client) {
    // SO_PEERCRED read directly: the JDK's option would look the uid's name up (getpwuid, through NSS:
    // files, or a directory server on a cluster) on this thread, for every connection.
    int fd;
    SocketPeer.Cred cred;
    try {
      fd = SocketPeer.fd(client);
      cred = SocketPeer.cred(fd);
    } catch (IOException e) {
      return new Peer("unknown", false);
    }
    String user = Peer.uid(cred.uid());
    long mountNs = mountNamespace(fd, cred.pid());
    if (cred.uid() != 0) {
      return new Peer(user, false, cred.pid(), null, mountNs);
    }
    String why = whyNot(fd, cred.pid());
    return new Peer(user, why == null, cred.pid(), why, mountNs);
  }

  /**
   * The mount namespace of the process that connected {@code fd}, as its inode number, or -1: read
   * through its /proc link (no path inside the peer's root is walked, so a FUSE mount there cannot
   * stall it). Where the kernel gives the connecting process as a pidfd (Linux 6.5), the answer counts
   * only if that process still holds its pid after the read; before that, the pid SO_PEERCRED gave
   * at connect is taken as it is (an answer about the wrong /dev/shm is advice, never an action).
   */
  private long mountNamespace(int fd, int pid) {
    if (pid <= 0 || proc == null) {
      return -1;
    }
    int pidfd = -1;
    try {
      pidfd = SocketPeer.pidfd(fd);
    } catch (IOException e) {
      // before Linux 6.5, or the peer is gone (then the read below fails too)
    }
    try {
      long inode = proc.namespaceInode(pid, "mnt");
      return inode < 0 || (pidfd >= 0 && !SocketPeer.unreaped(pidfd)) ? -1 : inode;
    } finally {
      if (pidfd >= 0) {
        Pidfd.close(pidfd);
      }
    }
  }

  /** Null when the uid 0 process {@code pid} that connected {@code fd} is root of the host, else why not. */
  private String whyNot(int fd, int pid) {
    if (host == null) {
      return "shmguard could not read its own namespaces to compare";
    }
    if (pid <= 0) {
      return "the kernel did not say which process it is";
    }
    int pidfd;
    long startedBy = -1;
    try {
      try {
        pidfd = SocketPeer.pidfd(fd);
      } catch (ErrnoException e) {
        if (e.errno() != SocketPeer.ENOPROTOOPT) {
          throw e;
        }
        startedBy = SocketPeer.bootTicks();
        pidfd = Pidfd.open(pid);
      }
    } catch (IOException e) {
      return "its process " + pid + " could not be held (" + e.getMessage() + ")";
    }
    try {
      return host.whyNot(pid, pidfd, startedBy);
    } finally {
      Pidfd.close(pidfd);
    }
  }

  @Override
  public void close() {
    if (host != null) {
      host.close();
    }
    if (proc != null) {
      proc.close();
    }
  }
}
