package org.shmguard.metrics;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * One client of the metrics port, driven by the port's selector thread without ever blocking:
 * it reads a request head of at most {@link #MAX_HEAD_BYTES}, answers it, and closes. Each stage
 * has a deadline the port enforces ({@link #deadline()}), so a client that sends half a request
 * or never reads its answer costs one connection slot for a bounded time and nothing else.
 */
final class HttpConnection {
  static final int MAX_HEAD_BYTES = 4096;

  /** Answers a request by its method and path (the query string already cut off). */
  interface Router {
    HttpReply route(String method, String path) throws IOException;
  }

  enum Stage { READING, WRITING, DRAINING, DONE }

  private final SocketChannel channel;
  private final SelectionKey key;
  private final long acceptedNanos;
  private final Timeouts timeouts;
  private ByteBuffer head = ByteBuffer.allocate(512);
  private ByteBuffer[] reply;
  private Stage stage = Stage.READING;
  private long deadline;

  /** How long each stage may take, in nanoseconds. */
  record Timeouts(long request, long reply, long drain) {}

  HttpConnection(SocketChannel channel, SelectionKey key, long nowNanos, Timeouts timeouts) {
    this.channel = channel;
    this.key = key;
    this.acceptedNanos = nowNanos;
    this.timeouts = timeouts;
    this.deadline = nowNanos + timeouts.request();
    key.attach(this);
  }

  Stage stage() {
    return stage;
  }

  long acceptedNanos() {
    return acceptedNanos;
  }

  long deadline() {
    return deadline;
  }

  /** Does what the socket is ready for; afterwards {@link #stage()} is DONE when it should be closed. */
  void onReady(Router router, long nowNanos) {
    try {
      switch (stage) {
        case READING -> read(router, nowNanos);
        case WRITING -> write(nowNanos);
        case DRAINING -> drain();
        case DONE -> { }
      }
    } catch (IOException e) {
      stage = Stage.DONE; // the client went away or reset: nothing to tell it
    }
  }

  /** Past its deadline: a request still unread gets 408 if the socket takes it at once; then closed. */
  void expire() {
    if (stage == Stage.READING) {
      try {
        channel.write(HttpReply.text(408, "the request did not arrive in time\n").buffers(false));
      } catch (IOException e) {
        // closed either way
      }
    }
    stage = Stage.DONE;
  }

  void close() {
    stage = Stage.DONE;
    key.cancel();
    try {
      channel.close();
    } catch (IOException e) {
      // nothing more to tell this client
    }
  }

  private void read(Router router, long nowNanos) throws IOException {
    while (true) {
      if (!head.hasRemaining()) {
        if (head.capacity() >= MAX_HEAD_BYTES) {
          respond(HttpReply.text(431, "a request head is at most " + MAX_HEAD_BYTES + " bytes\n"), false, nowNanos);
          return;
        }
        head = ByteBuffer.allocate(Math.min(MAX_HEAD_BYTES, head.capacity() * 2)).put(head.flip());
      }
      int n = channel.read(head);
      if (n < 0) {
        stage = Stage.DONE;
        return;
      }
      if (n == 0) {
        return;
      }
      int end = headEnd();
      if (end >= 0) {
        answer(router, new String(head.array(), 0, end, StandardCharsets.ISO_8859_1), nowNanos);
        return;
      }
    }
  }

  /** Where the blank line that ends the head starts, or -1 while it has not arrived. */
  private int headEnd() {
    byte[] b = head.array();
    for (int i = 0; i < head.position(); i++) {
      if (b[i] == '\n' && ((i >= 1 && b[i - 1] == '\n') || (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n'))) {
        return i;
      }
    }
    return -1;
  }

  private void answer(Router router, String headText, long nowNanos) throws IOException {
    String requestLine = headText.lines().findFirst().orElse("");
    String[] parts = requestLine.split(" ");
    if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
      respond(HttpReply.text(400, "not an HTTP/1 request line\n"), false, nowNanos);
      return;
    }
    String method = parts[0];
    if (!method.equals("GET") && !method.equals("HEAD")) {
      respond(HttpReply.text(405, "only GET and HEAD\n"), false, nowNanos);
      return;
    }
    String target = parts[1];
    int query = target.indexOf('?');
    String path = query < 0 ? target : target.substring(0, query);
    HttpReply reply;
    try {
      reply = router.route(method, path);
    } catch (IOException | RuntimeException e) {
      reply = HttpReply.text(500, "cannot answer: " + e + "\n");
    }
    respond(reply, method.equals("HEAD"), nowNanos);
  }

  private void respond(HttpReply r, boolean headOnly, long nowNanos) throws IOException {
    reply = r.buffers(headOnly);
    head = null;
    stage = Stage.WRITING;
    deadline = nowNanos + timeouts.reply();
    write(nowNanos);
  }

  private void write(long nowNanos) throws IOException {
    channel.write(reply);
    if (reply[reply.length - 1].hasRemaining()) {
      key.interestOps(SelectionKey.OP_WRITE);
      return;
    }
    reply = null;
    // Half-close and wait for the client's end: closing over input it may still send would
    // reset the connection and could cost it the answer it has not read yet.
    channel.shutdownOutput();
    stage = Stage.DRAINING;
    deadline = nowNanos + timeouts.drain();
    key.interestOps(SelectionKey.OP_READ);
    drain();
  }

  private void drain() throws IOException {
    ByteBuffer sink = ByteBuffer.allocate(1024);
    for (int i = 0; i < 16; i++) {
      sink.clear();
      int n = channel.read(sink);
      if (n < 0) {
        stage = Stage.DONE;
        return;
      }
      if (n == 0) {
        return;
      }
    }
  }
}
