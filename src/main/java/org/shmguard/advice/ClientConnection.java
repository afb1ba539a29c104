package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * One client's connection, read and written with a deadline: a request line of bounded length
 * that must arrive in time, so a slow or endless client costs one slot for a bounded time and
 * gets an error reply.
 */
final class ClientConnection implements Closeable {
  private final SocketChannel channel;
  private final Selector selector;
  private final SelectionKey key;

  ClientConnection(SocketChannel channel) throws IOException {
    this.channel = channel;
    channel.configureBlocking(false);
    this.selector = Selector.open();
    this.key = channel.register(selector, SelectionKey.OP_READ);
  }

  /** The first line the client sends, without its newline; throws too-long or timeout. */
  String readLine(int maxBytes, Duration timeout) throws IOException, ProtocolException {
    return readLine(maxBytes, timeout, timeout);
  }

  /**
   * The first line the client sends, without its newline. Its first byte must come within
   * {@code idle} and the whole line within {@code timeout}; throws too-long or timeout.
   */
  String readLine(int maxBytes, Duration idle, Duration timeout) throws IOException, ProtocolException {
    ByteBuffer buf = ByteBuffer.allocate(maxBytes + 1);
    long start = System.nanoTime();
    Duration silence = idle.compareTo(timeout) < 0 ? idle : timeout;
    long idleDeadline = start + silence.toNanos();
    long deadline = start + timeout.toNanos();
    int scanned = 0;
    while (true) {
      int n = channel.read(buf);
      for (int i = scanned; i < buf.position(); i++) {
        if (buf.get(i) == '\n') {
          return line(buf, i);
        }
      }
      scanned = buf.position();
      if (scanned > maxBytes) {
        throw new ProtocolException(ProtocolException.TOO_LONG, "a request line is at most " + maxBytes + " bytes");
      }
      if (n < 0) {
        if (scanned == 0) {
          throw new ProtocolException(ProtocolException.BAD_REQUEST, "no request before the connection closed");
        }
        return line(buf, scanned); // a client that half-closed after its last line
      }
      long now = System.nanoTime();
      if (scanned == 0 && now - idleDeadline >= 0) {
        throw new ProtocolException(ProtocolException.TIMEOUT, "nothing received within " + silence.toMillis() + " ms");
      }
      long left = (scanned == 0 ? idleDeadline : deadline) - now;
      if (left <= 0) {
        throw new ProtocolException(ProtocolException.TIMEOUT, "no complete request line within " + timeout.toMillis() + " ms");
      }
      if (n == 0) {
        selector.select(Math.max(1, (left + 999_999) / 1_000_000));
        selector.selectedKeys().clear();
      }
    }
  }

  /** Everything until the peer closes, at most {@code maxBytes}, within {@code timeout}. */
  String readAll(int maxBytes, Duration timeout) throws IOException, ProtocolException {
    // grown as the reply comes: a SCAN reply may be megabytes, most replies are a few lines
    ByteBuffer buf = ByteBuffer.allocate(Math.min(maxBytes, 64 * 1024));
    long deadline = System.nanoTime() + timeout.toNanos();
    key.interestOps(SelectionKey.OP_READ);
    while (true) {
      int n = channel.read(buf);
      if (n < 0) {
        return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
      }
      if (!buf.hasRemaining()) {
        if (buf.capacity() >= maxBytes) {
          throw new ProtocolException(ProtocolException.TOO_LONG, "the reply is longer than " + maxBytes + " bytes");
        }
        ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(maxBytes, 2L * buf.capacity()));
        buf.flip();
        bigger.put(buf);
        buf = bigger;
        continue;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new ProtocolException(ProtocolException.TIMEOUT, "no complete reply within " + timeout.toMillis() + " ms");
      }
      if (n == 0) {
        selector.select(Math.max(1, left / 1_000_000));
        selector.selectedKeys().clear();
      }
    }
  }

  private static String line(ByteBuffer buf, int end) {
    int len = end > 0 && buf.get(end - 1) == '\r' ? end - 1 : end;
    return new String(buf.array(), 0, len, StandardCharsets.US_ASCII);
  }

  /** Writes {@code text} within {@code timeout}; a client that does not read loses its reply. */
  void write(String text, Duration timeout) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    long deadline = System.nanoTime() + timeout.toNanos();
    key.interestOps(SelectionKey.OP_WRITE);
    while (buf.hasRemaining()) {
      if (channel.write(buf) == 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new IOException("the client did not read its reply within " + timeout.toMillis() + " ms");
        }
        selector.select(Math.max(1, left / 1_000_000));
        selector.selectedKeys().clear();
      }
    }
  }

  /**
   * Ends our side and discards what the client still sends, until it closes, for at most
   * {@code drainFor} and 64 KiB. Closing a Unix socket with unread input resets the connection,
   * and the client would lose the reply it has not read yet.
   */
  void finish(Duration drainFor) {
    try {
      channel.shutdownOutput();
      key.interestOps(SelectionKey.OP_READ);
      ByteBuffer sink = ByteBuffer.allocate(4096);
      long deadline = System.nanoTime() + drainFor.toNanos();
      int total = 0;
      while (total < 64 * 1024) {
        sink.clear();
        int n = channel.read(sink);
        if (n < 0) {
          return;
        }
        total += n;
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        if (n == 0) {
          selector.select(Math.max(1, left / 1_000_000));
          selector.selectedKeys().clear();
        }
      }
    } catch (IOException e) {
      // the client is gone: nothing left to protect
    }
  }

  @Override
  public void close() throws IOException {
    try {
      selector.close();
    } finally {
      channel.close();
    }
  }
}
