package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Refused connections over real sockets, with the clock given by hand: a refusal is told at once
 * and lingers until the client closes or its time is up; a held one is told only when its hold
 * ends; and closing all tells the held nothing more.
 */
class RefusalsTest {
  private static final long NOW = 1_000_000_000_000L;
  private ServerSocketChannel server;
  private Selector selector;
  private Refusals refusals;
  private final List<SocketChannel> clients = new ArrayList<>();

  @BeforeEach
  void listen() throws IOException {
    server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    selector = Selector.open();
    refusals = new Refusals(selector);
  }

  @AfterEach
  void close() throws IOException {
    refusals.closeAll();
    for (SocketChannel c : clients) {
      c.close();
    }
    selector.close();
    server.close();
  }

  @Test
  void aRefusalIsToldAtOnceAndLingersUntilTheClientCloses() throws IOException {
    SocketChannel client = connect();
    write(client, "ADVISE v1 ranks=8\n");
    SocketChannel accepted = server.accept();

    refusals.refuse(accepted, "ERR v1 busy", NOW);

    assertThat(readToEnd(client)).isEqualTo("ERR v1 busy\n");
    assertThat(refusals.nextDeadlineMillis(NOW)).isEqualTo(Refusals.LINGER / 1_000_000);
    client.close();
    wakeAndRead();
    assertThat(accepted.isOpen()).isFalse();
    assertThat(refusals.nextDeadlineMillis(NOW)).isZero();
  }

  @Test
  void aLingeringRefusalIsClosedWhenItsTimeIsUp() throws IOException {
    SocketChannel client = connect();
    SocketChannel accepted = server.accept();
    refusals.refuse(accepted, "ERR v1 busy", NOW);

    refusals.sweep(NOW + Refusals.LINGER - 1);
    assertThat(accepted.isOpen()).isTrue();
    refusals.sweep(NOW + Refusals.LINGER);

    assertThat(accepted.isOpen()).isFalse();
    assertThat(readToEnd(client)).isEqualTo("ERR v1 busy\n");
  }

  @Test
  void aHeldConnectionIsToldOnlyWhenItsHoldEnds() throws IOException {
    SocketChannel client = connect();
    write(client, "ADVISE v1 ranks=8\n");
    SocketChannel accepted = server.accept();

    refusals.hold(accepted, "uid 1000", "ERR v1 rate-limited", NOW);
    wakeAndRead(); // the request is read and dropped
    assertThat(refusals.nextDeadlineMillis(NOW)).isEqualTo(Refusals.HOLD / 1_000_000);
    refusals.sweep(NOW + Refusals.HOLD - 1);
    client.configureBlocking(false);
    assertThat(client.read(ByteBuffer.allocate(64))).as("nothing told before the hold ends").isZero();
    client.configureBlocking(true);

    refusals.sweep(NOW + Refusals.HOLD);

    assertThat(readToEnd(client)).isEqualTo("ERR v1 rate-limited\n");
  }

  @Test
  void closingAllEndsTheHeldWithoutTheirLine() throws IOException {
    SocketChannel client = connect();
    refusals.hold(server.accept(), "uid 1000", "ERR v1 rate-limited", NOW);

    refusals.closeAll();

    assertThat(readToEnd(client)).isEmpty();
    assertThat(refusals.nextDeadlineMillis(NOW)).isZero();
  }

  private SocketChannel connect() throws IOException {
    SocketChannel c = SocketChannel.open(server.getLocalAddress());
    clients.add(c);
    return c;
  }

  private static void write(SocketChannel c, String text) throws IOException {
    c.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)));
  }

  /** What the acceptor's loop does when a refused connection is readable. */
  private void wakeAndRead() throws IOException {
    selector.select(2_000);
    for (SelectionKey k : selector.selectedKeys()) {
      refusals.readable(k);
    }
    selector.selectedKeys().clear();
  }

  private static String readToEnd(SocketChannel c) throws IOException {
    c.socket().setSoTimeout(5_000);
    byte[] all = c.socket().getInputStream().readAllBytes();
    return new String(all, StandardCharsets.US_ASCII);
  }
}
