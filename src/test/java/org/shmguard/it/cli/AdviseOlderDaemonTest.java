package org.shmguard.it.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Sandbox;

/** {@code shmguard advise} against a daemon that only knows the first ADVISE keys. */
class AdviseOlderDaemonTest {
  @Test
  void aDaemonOlderThanTheShapeKeysIsAskedAgainWithoutThem() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "old-daemon-");
    Path socket = dir.resolve("advice.sock");
    List<String> seen = new CopyOnWriteArrayList<>();
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(socket));
      Thread old = new Thread(() -> answerLikeAnOlderDaemon(server, seen));
      old.setDaemon(true);
      old.start();

      CliRun run = CliRun.of("advise", "--socket", socket.toString(), "--daemon-only", "--local-ranks", "4",
          "--nodes", "1", "--p2p", "no", "--timeout", "5s");

      assertThat(run.status()).as(run.err()).isZero();
      assertThat(run.out()).contains("SHMGUARD_ADVICE=none");
      assertThat(seen).hasSize(2);
      assertThat(seen.get(0)).contains("nodes=1", "p2p=no");
      assertThat(seen.get(1)).startsWith("ADVISE v1 ranks=4").doesNotContain("nodes=", "p2p=", "numa=");
      assertThat(run.err()).contains("the daemon is older than --nodes");
      old.interrupt();
    } finally {
      Files.deleteIfExists(socket);
      Files.deleteIfExists(dir);
    }
  }

  /** Two connections: the first refused as a daemon of the first protocol keys refuses, the second answered. */
  private static void answerLikeAnOlderDaemon(ServerSocketChannel server, List<String> seen) {
    for (int i = 0; i < 2; i++) {
      try (SocketChannel c = server.accept()) {
        ByteBuffer buf = ByteBuffer.allocate(2048);
        StringBuilder line = new StringBuilder();
        while (line.indexOf("\n") < 0 && c.read(buf) > 0) {
          buf.flip();
          line.append(StandardCharsets.US_ASCII.decode(buf));
          buf.clear();
        }
        String request = line.toString().strip();
        seen.add(request);
        String reply = request.contains("nodes=") || request.contains("numa=") || request.contains("p2p=")
            ? "ERR v1 bad-request ADVISE takes no \"nodes\"; it takes dev, format, nccl, ranks\n"
            : "OK v1\nSHMGUARD_ADVICE=none\n";
        c.write(ByteBuffer.wrap(reply.getBytes(StandardCharsets.US_ASCII)));
      } catch (IOException e) {
        return;
      }
    }
  }
}
