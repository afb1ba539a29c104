package org.shmguard.advice;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Connections told "ERR v1 busy", kept open briefly by the acceptor's selector without a thread
 * of their own: the line is written and our side shut at once, and what the client still sends
 * (its request) is read and dropped until it closes or {@link #LINGER} passes. Closing at once
 * would make the client's write of its request fail, or its read fail after the line, so it
 * would never learn why. At most {@link #MAX_LINGERING} linger; beyond that one is closed
 * early, so a flood of refused connections costs a bounded number of descriptors.
 */
final class Refusals {
  static final long LINGER = 500_000_000L;
  static final int MAX_LINGERING = 64;

  private record Lingering(SocketChannel channel, SelectionKey key, long until) {}

  private final Selector selector;
  private final Deque<Lingering> lingering = new ArrayDeque<>();
  private final ByteBuffer sink = ByteBuffer.allocate(4096);

  Refusals(Selector selector) {
    this.selector = selector;
  }

  /** Tells {@code client} {@code line} and lets it go; never blocks. */
  void refuse(SocketChannel client, String line, long now) {
    try {
      client.configureBlocking(false);
      client.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII)));
      client.shutdownOutput();
      if (lingering.size() >= MAX_LINGERING) {
        close(lingering.removeFirst());
      }
      lingering.addLast(new Lingering(client, client.register(selector, SelectionKey.OP_READ), now + LINGER));
    } catch (IOException e) {
      closeQuietly(client);
    }
  }

  /** The client sent something or closed: drop what it sent, and close once it has. */
  void readable(SelectionKey key) {
    SocketChannel ch = (SocketChannel) key.channel();
    try {
      for (int i = 0; i < 16; i++) {
        sink.clear();
        int n = ch.read(sink);
        if (n < 0) {
          break;
        }
        if (n == 0) {
          return;
        }
      }
    } catch (IOException e) {
      // gone: close below
    }
    lingering.removeIf(l -> l.key() == key);
    key.cancel();
    closeQuietly(ch);
  }

  /** Whether no refused connection is lingering: then nothing has a deadline. */
  boolean isEmpty() {
    return lingering.isEmpty();
  }

  /** Closes those whose time is up. */
  void sweep(long now) {
    while (!lingering.isEmpty() && now - lingering.peekFirst().until() >= 0) {
      close(lingering.removeFirst());
    }
  }

  void closeAll() {
    while (!lingering.isEmpty()) {
      close(lingering.removeFirst());
    }
  }

  private void close(Lingering l) {
    l.key().cancel();
    try {
      sink.clear();
      l.channel().read(sink); // what is unread at close would turn the client's end of file into a reset
    } catch (IOException e) {
      // closing anyway
    }
    closeQuietly(l.channel());
  }

  private static void closeQuietly(SocketChannel c) {
    try {
      c.close();
    } catch (IOException e) {
      // nothing more to tell this client
    }
  }
}
