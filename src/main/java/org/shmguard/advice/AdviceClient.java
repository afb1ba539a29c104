package org.shmguard.advice;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Asks the daemon one request over its socket and returns the reply's body.
 *
 * <pre>{@code
 * String env = AdviceClient.ask(Path.of("/run/shmguard/advice.sock"), "ADVISE v1 ranks=4", Duration.ofSeconds(2));
 * }</pre>
 */
public final class AdviceClient {
  private static final int MAX_REPLY_BYTES = 64 * 1024;

  private AdviceClient() {}

  /**
   * The body of an "OK v1" reply. An "ERR v1" reply becomes a {@link ProtocolException} with the
   * server's code and message; no answer in time, "timeout"; no daemon, an IOException.
   */
  public static String ask(Path socket, String request, Duration timeout) throws IOException, ProtocolException {
    return ask(socket, request, timeout, MAX_REPLY_BYTES);
  }

  /** As {@link #ask(Path, String, Duration)}, for a reply of up to {@code maxReplyBytes} (SCAN's may be megabytes). */
  public static String ask(Path socket, String request, Duration timeout, int maxReplyBytes)
      throws IOException, ProtocolException {
    SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      ch.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      ch.close();
      throw new IOException("cannot connect to " + socket + ": " + e.getMessage(), e);
    }
    try (ClientConnection c = new ClientConnection(ch)) {
      c.write(request + "\n", timeout);
      String reply = c.readAll(maxReplyBytes, timeout);
      int nl = reply.indexOf('\n');
      String status = nl < 0 ? reply : reply.substring(0, nl);
      if (status.equals("OK " + Request.VERSION)) {
        return reply.substring(nl + 1);
      }
      String[] parts = status.split(" ", 4);
      if (parts.length >= 3 && parts[0].equals("ERR")) {
        throw new ProtocolException(parts[2], parts.length == 4 ? parts[3] : "");
      }
      throw new ProtocolException(ProtocolException.FAILED, "the daemon sent no reply this client understands: " + Request.clip(status));
    }
  }
}
