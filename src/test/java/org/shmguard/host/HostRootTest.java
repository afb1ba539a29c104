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
