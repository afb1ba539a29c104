package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.nativ.ErrnoException;
import org.shmguard.nativ.Pidfd;
import org.shmguard.nativ.SocketPeer;
import org.shmguard.testing.Cmd;

/**
 * The peer of a real Unix socket: this process's own credentials through its descriptor, another
 * user's process (uid 65534, via setpriv) named by pid and uid, its pidfd told unreaped until that
 * process is gone, and the boot clock in /proc's ticks.
 */
class SocketPeerTest {

  @Test
  void aConnectionFromThisProcessNamesItsPidAndUid(@TempDir Path dir) throws IOException {
    Path path = dir.resolve("s.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(path));
        SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(path));
        SocketChannel accepted = server.accept()) {
      int fd = SocketPeer.fd(accepted);
      assertThat(Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString()).startsWith("socket:[");

      SocketPeer.Cred c = SocketPeer.cred(fd);

      assertThat(c.pid()).isEqualTo(ProcessHandle.current().pid());
      assertThat(c.uid()).isZero();
      assertThat(c.gid()).isZero();
    } finally {
      Files.deleteIfExists(path);
    }
  }

  @Test
  void anotherUsersProcessIsNamedAndItsPidfdSaysWhenItIsGone(@TempDir Path dir) throws Exception {
    Path path = dir.resolve("s.sock");
    Cmd.run("chmod", "755", dir.toString());
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(path))) {
      Cmd.run("chmod", "666", path.toString());
      // python3 as uid 65534: connects, then waits for its stdin to close
      Process peer = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
          "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\nprint('ok', flush=True)\nsys.stdin.read()",
          path.toString()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      try (SocketChannel accepted = acceptWithin(server, 10_000)) {
        assertThat(new String(peer.getInputStream().readNBytes(3))).isEqualTo("ok\n");
        int fd = SocketPeer.fd(accepted);
        SocketPeer.Cred c = SocketPeer.cred(fd);
        assertThat(c.pid()).isEqualTo(peer.pid());
        assertThat(c.uid()).isEqualTo(65534);
        assertThat(c.gid()).isEqualTo(65534);

        int pidfd;
        try {
          pidfd = SocketPeer.pidfd(fd);
        } catch (ErrnoException e) {
          assertThat(e.errno()).as("only a kernel before 6.5 lacks SO_PEERPIDFD").isEqualTo(SocketPeer.ENOPROTOOPT);
          return;
        }
        try {
          assertThat(SocketPeer.unreaped(pidfd)).isTrue();
          peer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
          assertThat(SocketPeer.unreaped(pidfd)).isFalse();
        } finally {
          Pidfd.close(pidfd);
        }
      } finally {
        peer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } finally {
      Files.deleteIfExists(path);
    }
  }

  private static SocketChannel acceptWithin(ServerSocketChannel server, long millis) throws Exception {
    server.configureBlocking(false);
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (System.nanoTime() < deadline) {
      SocketChannel c = server.accept();
      if (c != null) {
        c.configureBlocking(true);
        return c;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no connection within " + millis + " ms");
  }

  @Test
  void theBootClockCountsInProcsTicksAfterEveryProcessStarted() throws IOException {
    String stat = Files.readString(Path.of("/proc/self/stat"));
    long ownStart = Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19]);
    double uptime = Double.parseDouble(Files.readString(Path.of("/proc/uptime")).split(" ")[0]);

    long now = SocketPeer.bootTicks();

    assertThat(now).isGreaterThanOrEqualTo(ownStart);
    assertThat((double) now).isCloseTo(uptime * 100, org.assertj.core.data.Offset.offset(200.0)); // USER_HZ is 100
  }
}
