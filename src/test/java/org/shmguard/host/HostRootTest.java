package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Pidfd;
import org.shmguard.nativ.SocketPeer;

/** HostRoot on real processes: its own namespaces, another mount namespace, a late start, a reaped process. */
class HostRootTest {
  @Test
  void aProcessInShmguardsOwnNamespacesIsRootOfTheHostUnlessItStartedAfterTheBound() throws Exception {
    long before = SocketPeer.bootTicks();
    Process p = new ProcessBuilder("sleep", "60").start();
    int pidfd = Pidfd.open((int) p.pid());
    try (HostRoot host = HostRoot.open()) {
      assertThat(host.whyNot((int) p.pid(), pidfd, -1)).isNull();
      assertThat(host.whyNot((int) p.pid(), pidfd, SocketPeer.bootTicks())).isNull();
      assertThat(host.whyNot((int) p.pid(), pidfd, before - 1))
          .isEqualTo("pid " + p.pid() + " is a process that started after the connection was made");
    } finally {
      Pidfd.close(pidfd);
      p.destroy();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aProcessInAMountNamespaceOfItsOwnIsNot() throws Exception {
    Process p = new ProcessBuilder("unshare", "--mount", "sleep", "60").start();
    int pidfd = Pidfd.open((int) p.pid());
    try (HostRoot host = HostRoot.open()) {
      org.shmguard.testing.Eventually.until("unshare in its own mount namespace", java.time.Duration.ofSeconds(10),
          () -> host.whyNot((int) p.pid(), pidfd, -1) != null);
      assertThat(host.whyNot((int) p.pid(), pidfd, -1)).isEqualTo("it is root in another mount namespace");
    } finally {
      Pidfd.close(pidfd);
      p.destroy();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aDaemonInAMountNamespaceOfItsOwnTakesTheNamespacesOfProcessOneAsTheHostsAsADaemonSetWithHostPidDoes() throws Exception {
    org.shmguard.testing.Sandbox.require(); // process 1 is the sandbox's, in the test JVM's namespaces
    Process daemon = new ProcessBuilder("unshare", "--mount", "sleep", "60").start();
    Process other = new ProcessBuilder("unshare", "--mount", "sleep", "60").start();
    Process node = new ProcessBuilder("sleep", "60").start();
    int nodeFd = Pidfd.open((int) node.pid());
    int otherFd = Pidfd.open((int) other.pid());
    try {
      org.shmguard.testing.Eventually.until("both unshares in their own mount namespaces", java.time.Duration.ofSeconds(10),
          () -> ownMountNamespace(daemon) && ownMountNamespace(other));
      try (HostRoot host = HostRoot.open(Long.toString(daemon.pid()))) {
        assertThat(host.whyNot((int) node.pid(), nodeFd, -1)).as("root in process 1's namespaces: the node's").isNull();
        assertThat(host.whyNot((int) other.pid(), otherFd, -1)).isEqualTo("it is root in another mount namespace");
      }
    } finally {
      Pidfd.close(nodeFd);
      Pidfd.close(otherFd);
      for (Process p : new Process[] {daemon, other, node}) {
        p.destroy();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static boolean ownMountNamespace(Process p) {
    try {
      return !java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/" + p.pid() + "/ns/mnt"))
          .equals(java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/ns/mnt")));
    } catch (java.io.IOException e) {
      return false;
    }
  }

  @Test
  void aReapedProcessIsNot() throws Exception {
    Process p = new ProcessBuilder("sleep", "60").start();
    int pidfd = Pidfd.open((int) p.pid());
    p.destroy();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    try (HostRoot host = HostRoot.open()) {
      assertThat(host.whyNot((int) p.pid(), pidfd, -1)).startsWith("the namespaces of its process " + p.pid()
          + " could not be read");
    } finally {
      Pidfd.close(pidfd);
    }
  }
}
