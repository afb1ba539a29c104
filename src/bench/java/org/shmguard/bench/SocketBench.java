package org.shmguard.bench;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The advice socket (README, "The socket protocol"): one request line per connection, the reply
 * read to its end. Measures the most answers per second a few clients get, and the latency
 * distribution at a fixed 1,000 requests per second, open loop: each request is due at its own time
 * and its latency counts from then, so a stalled server cannot hide its queue.
 */
final class SocketBench {
  private static final String REQUEST = "ADVISE v1 ranks=8\n";

  private final Path socket;

  SocketBench(Path socket) {
    this.socket = socket;
  }

  /** One request; its reply's first line, or throws. */
  String ask() throws IOException {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      ch.write(ByteBuffer.wrap(REQUEST.getBytes(StandardCharsets.US_ASCII)));
      ByteBuffer buf = ByteBuffer.allocate(8192);
      StringBuilder reply = new StringBuilder();
      while (ch.read(buf) >= 0) {
        buf.flip();
        reply.append(StandardCharsets.UTF_8.decode(buf));
        buf.clear();
      }
      int eol = reply.indexOf("\n");
      return eol < 0 ? reply.toString() : reply.substring(0, eol);
    }
  }

  /** Closed loop: {@code clients} threads asking back to back for {@code seconds}; answers per second. */
  double throughput(int clients, int seconds) throws InterruptedException {
    AtomicInteger ok = new AtomicInteger();
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < clients; c++) {
      Thread t = new Thread(() -> {
        while (System.nanoTime() < end) {
          try {
            if (ask().startsWith("OK v1")) {
              ok.incrementAndGet();
            }
          } catch (IOException e) {
            // counted as not answered
          }
        }
      }, "socket-client-" + c);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    return ok.get() / (double) seconds;
  }

  /** Result of the fixed-rate run. */
  record Rated(Stats latency, int sent, int ok, int failed, double achievedPerSecond) {}

  /** Open loop: {@code perSecond} requests a second for {@code seconds}, from a pool of workers. */
  Rated atRate(int perSecond, int seconds, int workers) throws InterruptedException {
    int total = perSecond * seconds;
    long periodNanos = 1_000_000_000L / perSecond;
    long start = System.nanoTime() + 100_000_000L;
    AtomicInteger next = new AtomicInteger();
    AtomicInteger ok = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    List<Double> latencies = Collections.synchronizedList(new ArrayList<>());
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      Thread t = new Thread(() -> {
        for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
          long due = start + i * periodNanos;
          long wait = due - System.nanoTime();
          if (wait > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(wait);
          }
          try {
            boolean good = ask().startsWith("OK v1");
            latencies.add((System.nanoTime() - due) / 1e6);
            (good ? ok : failed).incrementAndGet();
          } catch (IOException e) {
            failed.incrementAndGet();
          }
        }
      }, "socket-rate-" + w);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join();
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    return new Rated(Stats.ofMillis(latencies), total, ok.get(), failed.get(), ok.get() / elapsed);
  }
}
