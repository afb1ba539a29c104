package org.shmguard.advice;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * Refused connections, kept by the acceptor's selector without a thread of their own.
 *
 * <p>A connection told "ERR v1 busy" gets its line at once and our side shut; what the client
 * still sends (its request) is read and dropped until it closes or {@link #LINGER} passes.
 * Closing at once would make the client's write of its request fail, or its read fail after the
 * line, so it would never learn why. At most {@link #MAX_LINGERING} linger; beyond that one is
 * closed early, so a flood of refused connections costs a bounded number of descriptors.
 *
 * <p>A connection over its user's request rate is first <em>held</em> for {@link #HOLD}, its
 * request read and dropped, and only then told "ERR v1 rate-limited" (and lingers as above): a
 * client that asks again as soon as it is answered asks at most once per {@link #HOLD} on each
 * connection, so refusing it costs next to nothing. At most {@link #MAX_HELD_PER_USER} of one
 * user and {@link #MAX_HELD} in all are held; beyond that the line is written at once and the
 * connection closed, without lingering.
 */
final class Refusals {
  static final long LINGER = 500_000_000L;
  static final int MAX_LINGERING = 64;
  static final long HOLD = 1_000_000_000L;
  static final int MAX_HELD_PER_USER = 512;
  static final int MAX_HELD = 2048;

  /** A refused connection: held until {@code until} with its line unwritten, or lingering after it. */
  private static final class Entry {
    final SocketChannel channel;
    final String user;
    String line;
    SelectionKey key;
    long until;

    Entry(SocketChannel channel, String user, String line) {
      this.channel = channel;
      this.user = user;
      this.line = line;
    }
  }

  private final Selector selector;
  private final Deque<Entry> held = new ArrayDeque<>();
  private final Deque<Entry> lingering = new ArrayDeque<>();
  private final Map<String, Integer> heldByUser = new HashMap<>();
  private final ByteBuffer sink = ByteBuffer.allocate(4096);

  Refusals(Selector selector) {
    this.selector = selector;
  }

  /** Tells {@code client} {@code line} and lets it go; never blocks. */
  void refuse(SocketChannel client, String line, long now) {
    try {
      client.configureBlocking(false);
      linger(new Entry(client, null, line), now);
    } catch (IOException e) {
      closeQuietly(client);
    }
  }

  /**
   * Keeps {@code client} of {@code user} for {@link #HOLD} before telling it {@code line}; at
   * once when that user or everyone has as many held as may be. Never blocks.
   */
  void hold(SocketChannel client, String user, String line, long now) {
    int mine = heldByUser.getOrDefault(user, 0);
    if (mine >= MAX_HELD_PER_USER || held.size() >= MAX_HELD) {
      refuseNow(client, line);
      return;
    }
    try {
      client.configureBlocking(false);
      Entry e = new Entry(client, user, line);
      e.until = now + HOLD;
      e.key = client.register(selector, SelectionKey.OP_READ, e);
      held.addLast(e);
      heldByUser.put(user, mine + 1);
    } catch (IOException e) {
      closeQuietly(client);
    }
  }

  /**
   * Tells {@code client} {@code line} and closes it at once, with no linger: the cheapest refusal,
   * for a user who already has as many held as may be. What the client sent so far is read first,
   * so that it reads the line and then its end of file (unread input at close would reset it);
   * a request sent later than that makes the client's write fail.
   */
  private void refuseNow(SocketChannel client, String line) {
    try {
      client.configureBlocking(false);
      sink.clear();
      client.read(sink);
      client.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII)));
    } catch (IOException e) {
      // gone already
    }
    closeQuietly(client);
  }

  /** Writes the entry's line, shuts our side and lets it linger; never blocks. */
  private void linger(Entry e, long now) throws IOException {
    e.channel.write(ByteBuffer.wrap((e.line + "\n").getBytes(StandardCharsets.US_ASCII)));
    e.channel.shutdownOutput();
    if (lingering.size() >= MAX_LINGERING) {
      close(lingering.removeFirst());
    }
    e.until = now + LINGER;
    e.line = null;
    if (e.key == null) {
      e.key = e.channel.register(selector, SelectionKey.OP_READ, e);
    } else {
      e.key.interestOps(SelectionKey.OP_READ);
    }
    lingering.addLast(e);
  }

  /**
   * The client sent something or closed: drop what it sent. A lingering one is closed once the
   * client has closed; a held one is kept until its line is due (a client that shut its side
   * after the request still reads the line).
   */
  void readable(SelectionKey key) {
    Entry e = (Entry) key.attachment();
    SocketChannel ch = (SocketChannel) key.channel();
    boolean ended = false;
    try {
      for (int i = 0; i < 16; i++) {
        sink.clear();
        int n = ch.read(sink);
        if (n < 0) {
          ended = true;
          break;
        }
        if (n == 0) {
          return;
        }
      }
    } catch (IOException ex) {
      ended = true;
    }
    if (e != null && e.line != null) {
      if (ended) {
        key.interestOps(0); // nothing more to read; the line is still written when due
      }
      return; // held: a client sending more than 64 KiB at once is read again on the next wake
    }
    if (e != null) {
      lingering.remove(e);
    }
    key.cancel();
    closeQuietly(ch);
  }

  /** Milliseconds until the next deadline (at least 1), or 0 when nothing has one. */
  long nextDeadlineMillis(long now) {
    long next = Long.MAX_VALUE;
    if (!held.isEmpty()) {
      next = held.peekFirst().until;
    }
    if (!lingering.isEmpty()) {
      next = Math.min(next, lingering.peekFirst().until);
    }
    if (next == Long.MAX_VALUE) {
      return 0;
    }
    return Math.max(1, (next - now + 999_999) / 1_000_000);
  }

  /** Answers the held ones whose time is up, and closes the lingering ones whose time is up. */
  void sweep(long now) {
    while (!held.isEmpty() && now - held.peekFirst().until >= 0) {
      Entry e = held.removeFirst();
      release(e.user);
      try {
        linger(e, now);
      } catch (IOException | RuntimeException ex) {
        e.key.cancel();
        closeQuietly(e.channel);
      }
    }
    while (!lingering.isEmpty() && now - lingering.peekFirst().until >= 0) {
      close(lingering.removeFirst());
    }
  }

  void closeAll() {
    while (!held.isEmpty()) {
      Entry e = held.removeFirst();
      release(e.user);
      close(e);
    }
    while (!lingering.isEmpty()) {
      close(lingering.removeFirst());
    }
  }

  private void release(String user) {
    int mine = heldByUser.getOrDefault(user, 0);
    if (mine <= 1) {
      heldByUser.remove(user);
    } else {
      heldByUser.put(user, mine - 1);
    }
  }

  private void close(Entry e) {
    if (e.key != null) {
      e.key.cancel();
    }
    try {
      sink.clear();
      e.channel.read(sink); // what is unread at close would turn the client's end of file into a reset
    } catch (IOException ex) {
      // closing anyway
    }
    closeQuietly(e.channel);
  }

  private static void closeQuietly(SocketChannel c) {
    try {
      c.close();
    } catch (IOException e) {
      // nothing more to tell this client
    }
  }
}
