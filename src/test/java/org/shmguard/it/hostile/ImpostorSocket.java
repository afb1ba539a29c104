package org.shmguard.it.hostile;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * An ordinary user's fake advice socket, run as its own process (as uid 65534) by the tests of
 * the files root writes: {@code ImpostorSocket PATH} listens at PATH and answers every client
 * with "OK v1" and SHMGUARD_ADVICE=impostor, until killed. Uses the JDK only, so it runs from a
 * copied class file.
 */
public final class ImpostorSocket {
  static final String ANSWER = "OK v1\nSHMGUARD_ADVICE=impostor\n";

  private ImpostorSocket() {}

  public static void main(String[] args) throws Exception {
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(Path.of(args[0])));
      System.out.println("listening");
      System.out.flush();
      while (true) {
        try (SocketChannel c = server.accept()) {
          ByteBuffer in = ByteBuffer.allocate(1024);
          while (c.read(in) > 0 && in.get(in.position() - 1) != '\n' && in.hasRemaining()) {
            // read the request line, as a daemon would
          }
          c.write(ByteBuffer.wrap(ANSWER.getBytes(StandardCharsets.US_ASCII)));
        } catch (java.io.IOException e) {
          // a client that went away: serve the next one
        }
      }
    }
  }
}
