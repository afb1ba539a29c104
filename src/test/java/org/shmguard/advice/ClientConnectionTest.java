package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One advice client's connection over a real Unix socket: a request line within its bounds and
 * deadlines (each refusal with its protocol code), a whole reply read until the peer closes, a
 * reply written within its deadline, and an end that keeps the reply from being reset.
 */
class ClientConnectionTest {
  private static final Duration SECOND = Duration.ofSeconds(1);
  @TempDir Path dir;
  private ServerSocketChannel server;
  private SocketChannel peer;
  private ClientConnection connection;

  @BeforeEach
  void connect() throws IOException {
    Path socket = dir.resolve("test.sock");
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX).bind(UnixDomainSocketAddress.of(socket));
    peer = SocketChannel.open(UnixDomainSocketAddress.of(socket));
    connection = new ClientConnection(server.accept());
  }

  @AfterEach
  void close() throws IOException {
    connection.close();
    peer.close();
    server.close();
    Files.deleteIfExists(dir.resolve("test.sock"));
  }

  @Test
  void aLineComesWithoutItsNewlineOrCarriageReturn() throws Exception {
    send("PING v1\r\nADVISE v1\n");
    assertThat(connection.readLine(64, SECOND)).isEqualTo("PING v1");
  }

  @Test
  void aLastLineWithoutNewlineCountsWhenTheClientHalfCloses() throws Exception {
    send("PING v1");
    peer.shutdownOutput();
    assertThat(connection.readLine(64, SECOND)).isEqualTo("PING v1");
  }

  @Test
  void aLineOverTheLimitIsTooLong() {
    send("A".repeat(65) + "\n");
    assertThatThrownBy(() -> connection.readLine(64, SECOND)).isInstanceOfSatisfying(ProtocolException.class,
        e -> assertThat(e.code()).isEqualTo(ProtocolException.TOO_LONG)).hasMessage("a request line is at most 64 bytes");
  }

  @Test
  void aClientThatClosesWithoutARequestIsABadRequest() throws Exception {
    peer.shutdownOutput();
    assertThatThrownBy(() -> connection.readLine(64, SECOND)).isInstanceOfSatisfying(ProtocolException.class,
        e -> assertThat(e.code()).isEqualTo(ProtocolException.BAD_REQUEST));
  }

  @Test
  void silenceEndsAtTheIdleDeadlineAndAHalfLineAtTheWholeDeadline() {
    long start = System.nanoTime();
    assertThatThrownBy(() -> connection.readLine(64, Duration.ofMillis(200), Duration.ofSeconds(5)))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ProtocolException.TIMEOUT))
        .hasMessage("nothing received within 200 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(200), Duration.ofSeconds(4));

    send("PING");
    assertThatThrownBy(() -> connection.readLine(64, Duration.ofMillis(100), Duration.ofMillis(400)))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ProtocolException.TIMEOUT))
        .hasMessage("no complete request line within 400 ms");
  }

  @Test
  void aReplyIsReadWholeUntilThePeerClosesWithinItsBound() throws Exception {
    String big = "x".repeat(200_000);
    Thread writer = new Thread(() -> {
      send(big);
      try {
        peer.shutdownOutput();
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    writer.start();
    assertThat(connection.readAll(1 << 20, Duration.ofSeconds(5))).isEqualTo(big);
    writer.join();
  }

  @Test
  void aReplyOverItsBoundIsTooLong() {
    send("y".repeat(100));
    assertThatThrownBy(() -> connection.readAll(64, SECOND)).isInstanceOfSatisfying(ProtocolException.class,
        e -> assertThat(e.code()).isEqualTo(ProtocolException.TOO_LONG));
  }

  @Test
  void aClientThatDoesNotReadLosesItsReplyAtTheDeadline() {
    String huge = "z".repeat(8 << 20);
    assertThatThrownBy(() -> connection.write(huge, Duration.ofMillis(300)))
        .hasMessage("the client did not read its reply within 300 ms");
  }

  @Test
  void finishingLetsTheClientReadItsReplyAfterSendingMore() throws Exception {
    send("ADVISE v1\nmore the server never reads\n");
    assertThat(connection.readLine(64, SECOND)).isEqualTo("ADVISE v1");
    connection.write("OK v1\n", SECOND);

    connection.finish(Duration.ofMillis(200));

    ByteBuffer b = ByteBuffer.allocate(64);
    while (peer.read(b) >= 0) {
      // until our side's end
    }
    assertThat(new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII)).isEqualTo("OK v1\n");
  }

  private void send(String text) {
    try {
      ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
      while (b.hasRemaining()) {
        peer.write(b);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
