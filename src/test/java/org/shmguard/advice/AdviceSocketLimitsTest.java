package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.SocketClient;

/**
 * What ordinary users can do to the advice socket, for real: a server on a real Unix socket,
 * hostile clients as uid 65534 (and others) through setpriv, and what root and the other users
 * then see.
 */
class AdviceSocketLimitsTest {
  private static final int NOBODY = 65534;
  private static final int OTHER = 65533;
  private static SocketClient client;
  private AdviceServer server;
  private Path socket;

  @BeforeAll
  static void build() throws IOException {
    Sandbox.require();
    client = SocketClient.build();
  }

  @AfterAll
  static void remove() throws IOException {
    if (client != null) {
      client.delete();
    }
  }

  private void start(AdviceServer.Limits limits) throws IOException {
    socket = Sandbox.MOUNTS.resolve("advice-limits-" + ProcessHandle.current().pid() + ".sock");
    AdviceResponder responder = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());
    server = AdviceServer.bind(socket, responder, limits).start();
  }

  @AfterEach
  void stop() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  /** The shipped limits, with deadlines long enough that the idle clients stay for the whole test. */
  private static AdviceServer.Limits shippedCapsLongDeadlines() {
    return new AdviceServer.Limits(1024, Duration.ofSeconds(60), Duration.ofSeconds(60), 32, 4, 8);
  }

  @ParameterizedTest(name = "{0} idle connections")
  @ValueSource(ints = {16, 200})
  void idleConnectionsOfOneUserLeaveRootAndOtherUsersAnswered(int idle) throws Exception {
    start(shippedCapsLongDeadlines());
    try (SocketClient.Holding nobody = client.hold(NOBODY, socket, idle)) {
      long t0 = System.nanoTime();
      assertThat(rootAsks("PING")).isEqualTo("OK v1\npong\n");
      assertThat(client.ask(OTHER, socket, "PING")).isEqualTo("OK v1\npong\n");
      // long before any of nobody's connections could time out (60 s) and free a slot
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));

      // Each connection costs one of nobody's RequestRate.BURST tokens, busy or not; those past
      // the burst are told rate-limited once they have been held (Refusals.HOLD).
      int overRate = Math.max(0, idle - RequestRate.BURST);
      if (overRate > 0) {
        Thread.sleep(Refusals.HOLD / 1_000_000 + 500);
      }
      List<String> replies = nobody.replies();
      assertThat(replies).hasSize(idle);
      assertThat(replies.stream().filter(r -> r.equals("open"))).as(replies.toString()).hasSize(4);
      long busy = replies.stream().filter(r -> r.startsWith("ERR v1 busy uid 65534 already has 4 connections open")).count();
      long limited = replies.stream().filter(r -> r.startsWith("ERR v1 rate-limited uid 65534 asked more than")).count();
      assertThat(busy + limited).as(replies.toString()).isEqualTo(idle - 4);
      // tokens come back while the connections are made: a few more may be busy than the burst allows
      assertThat(limited).as(replies.toString()).isBetween((long) overRate - 2 * RequestRate.PER_SECOND, (long) overRate);
    }
  }

  @Test
  void ordinaryUsersTogetherCannotTakeRootsSlots() throws Exception {
    start(new AdviceServer.Limits(1024, Duration.ofSeconds(60), Duration.ofSeconds(60), 4, 2, 2));
    try (SocketClient.Holding nobody = client.hold(NOBODY, socket, 2);
        SocketClient.Holding other = client.hold(OTHER, socket, 2)) {
      assertThat(client.ask(65532, socket, "PING")).startsWith("ERR v1 busy all 4 connections for ordinary users are in use");

      assertThat(rootAsks("PING")).isEqualTo("OK v1\npong\n");
      assertThat(nobody.replies()).containsExactly("open", "open");
      assertThat(other.replies()).containsExactly("open", "open");
    }
    // their connections closed, their slots come free again (once the server has seen them go)
    Eventually.until("a third user is served again", Duration.ofSeconds(30),
        () -> client.ask(65532, socket, "PING").equals("OK v1\npong\n"));
  }

  @Test
  void aConnectionThatSendsNothingIsClosedAtTheIdleDeadline() throws Exception {
    start(new AdviceServer.Limits(1024, Duration.ofSeconds(2), Duration.ofSeconds(5), 32, 4, 8));
    try (SocketChannel silent = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      long t0 = System.nanoTime();
      String reply = readAll(silent);
      Duration took = Duration.ofNanos(System.nanoTime() - t0);

      assertThat(reply).isEqualTo("ERR v1 timeout nothing received within 2000 ms\n");
      assertThat(took).isBetween(Duration.ofMillis(1500), Duration.ofSeconds(15));
    }
  }

  @Test
  void aRequestSentAByteASecondIsCutAtTheRequestDeadlineWhileOthersAreServed() throws Exception {
    start(new AdviceServer.Limits(1024, Duration.ofSeconds(2), Duration.ofSeconds(4), 32, 4, 8));
    try (SocketChannel loris = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      loris.configureBlocking(false);
      long t0 = System.nanoTime();
      byte[] request = "ADVISE v1 ranks=8 format=env\n".getBytes(StandardCharsets.US_ASCII);
      StringBuilder reply = new StringBuilder();
      ByteBuffer buf = ByteBuffer.allocate(8192);
      int sent = 0;
      // one byte a second, each well inside the idle deadline, until the server answers
      while (sent < request.length && Duration.ofNanos(System.nanoTime() - t0).toSeconds() < 20) {
        int n = loris.read(buf);
        if (n != 0) {
          break;
        }
        loris.write(ByteBuffer.wrap(request, sent, 1));
        sent++;
        if (sent == 2) {
          assertThat(rootAsks("PING")).as("served while the slow one sends").isEqualTo("OK v1\npong\n");
        }
        Thread.sleep(1000);
      }
      loris.configureBlocking(true);
      reply.append(new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8)).append(readAll(loris));
      Duration took = Duration.ofNanos(System.nanoTime() - t0);

      assertThat(reply.toString()).isEqualTo("ERR v1 timeout no complete request line within 4000 ms\n");
      assertThat(sent).isLessThan(request.length);
      assertThat(took).isBetween(Duration.ofMillis(3500), Duration.ofSeconds(20));
    }
  }

  private String rootAsks(String line) throws IOException {
    try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
      c.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.US_ASCII)));
      return readAll(c);
    }
  }

  private static String readAll(SocketChannel c) throws IOException {
    StringBuilder sb = new StringBuilder();
    ByteBuffer buf = ByteBuffer.allocate(8192);
    while (c.read(buf) >= 0) {
      sb.append(new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8));
      buf.clear();
    }
    return sb.toString();
  }
}
