package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.attribute.UserPrincipal;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.shmguard.host.HostRoot;
import org.shmguard.nativ.ErrnoException;
import org.shmguard.nativ.Pidfd;
import org.shmguard.nativ.SocketPeer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes the {@link Peer} of an accepted connection, right after the accept: its user from
 * SO_PEERCRED, its pid, and, for uid 0 only, whether it is root of the host ({@link HostRoot}).
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
  private final UserPrincipal root;
  /** Null when shmguard's own namespaces could not be read: then no peer is root of the host. */
  private final HostRoot host;

  private PeerCheck(UserPrincipal root, HostRoot host) {
    this.root = root;
    this.host = host;
  }

  static PeerCheck open() throws IOException {
    // getpwnam("0") finds no user, so the lookup falls back to uid 0; principals compare by uid.
    UserPrincipal root = FileSystems.getDefault().getUserPrincipalLookupService().lookupPrincipalByName("0");
    HostRoot host;
    try {
      host = HostRoot.open();
    } catch (IOException e) {
      LOG.error("advice socket: {}; no client may ask REMOUNT, CLEAN or SCAN", e.getMessage());
      host = null;
    }
    return new PeerCheck(root, host);
  }

  Peer of(SocketChannel client) {
    String user;
    boolean uid0;
    try {
      UnixDomainPrincipal p = client.getOption(ExtendedSocketOptions.SO_PEERCRED);
      user = p.user().getName();
      uid0 = p.user().equals(root);
    } catch (IOException | UnsupportedOperationException e) {
      return new Peer("unknown", false);
    }
    int fd;
    SocketPeer.Cred cred;
    try {
      fd = SocketPeer.fd(client);
      cred = SocketPeer.cred(fd);
    } catch (IOException e) {
      return uid0 ? new Peer(user, false, 0, "shmguard could not tell which process it is (" + e.getMessage() + ")")
          : new Peer(user, false);
    }
    if (!uid0 || cred.uid() != 0) {
      return new Peer(user, false, cred.pid(), null);
    }
    String why = whyNot(fd, cred.pid());
    return new Peer(user, why == null, cred.pid(), why);
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
  }
}
