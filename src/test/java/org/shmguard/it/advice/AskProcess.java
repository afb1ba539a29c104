package org.shmguard.it.advice;

import java.io.ByteArrayOutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A bare socket client, run as its own process (and as another user) by the socket tests:
 * {@code AskProcess SOCKET REQUEST} sends the line and prints the whole reply. Uses the JDK only,
 * so it runs from a copied class file with no other classpath.
 */
public final class AskProcess {
  private AskProcess() {}

  public static void main(String[] args) throws Exception {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(Path.of(args[0])));
      ch.write(ByteBuffer.wrap((args[1] + "\n").getBytes(StandardCharsets.US_ASCII)));
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteBuffer buf = ByteBuffer.allocate(4096);
      while (ch.read(buf) >= 0) {
        out.write(buf.array(), 0, buf.position());
        buf.clear();
      }
      System.out.print(out.toString(StandardCharsets.UTF_8));
    }
  }
}
