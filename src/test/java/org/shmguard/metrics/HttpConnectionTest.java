package org.shmguard.metrics;

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
 * One connection of the metrics port over a real loopback socket, driven by hand as the port's
 * selector thread drives it: a request head in pieces, what it answers for each kind of request,
 * and what a client that is too slow or sends too much gets.
 */
class HttpConnectionTest {
  private static final HttpConnection.Timeouts TIMEOUTS = new HttpConnection.Timeouts(1_000, 2_000, 3_000);
  private ServerSocketChannel server;
  private Selector selector;
  private SocketChannel client;
  private HttpConnection connection;
  private final List<String> routed = new ArrayList<>();
  private final HttpConnection.Router router = (method, path) -> {
    routed.add(method + " " + path);
    if (path.equals("/boom")) {
      throw new IOException("rendering failed");
    }
    return HttpReply.text(200, "body of " + path + "\n");
  };

  @BeforeEach
  void connect() throws IOException {
    server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    selector = Selector.open();
    client = SocketChannel.open(server.getLocalAddress());
    SocketChannel accepted = server.accept();
    accepted.configureBlocking(false);
    SelectionKey key = accepted.register(selector, SelectionKey.OP_READ);
    connection = new HttpConnection(accepted, key, 0, TIMEOUTS);
  }

  @AfterEach
  void close() throws IOException {
    connection.close();
    client.close();
    selector.close();
    server.close();
  }

  @Test
  void aHeadArrivingInPiecesIsAnsweredOnceWholeAndTheConnectionCloses() throws IOException {
    send("GET /metrics?name=x HT");
    connection.onReady(router, 10);
    assertThat(connection.stage()).isEqualTo(HttpConnection.Stage.READING);
    assertThat(connection.deadline()).isEqualTo(1_000);
    assertThat(routed).isEmpty();

    send("TP/1.1\r\nHost: x\r\n\r\n");
    connection.onReady(router, 20);

    assertThat(routed).containsExactly("GET /metrics");
    assertThat(connection.stage()).isEqualTo(HttpConnection.Stage.DRAINING);
    assertThat(connection.deadline()).isEqualTo(20 + 3_000);
    String answer = readToEnd();
    assertThat(answer).startsWith("HTTP/1.1 200 OK\r\n").contains("Connection: close\r\n", "Content-Length: 17\r\n")
        .endsWith("\r\n\r\nbody of /metrics\n");

    client.shutdownOutput();
    connection.onReady(router, 30);
    assertThat(connection.stage()).isEqualTo(HttpConnection.Stage.DONE);
  }

  @Test
  void headGetsTheHeadAlone() throws IOException {
    send("HEAD / HTTP/1.0\n\n");
    connection.onReady(router, 0);
    assertThat(readToEnd()).startsWith("HTTP/1.1 200 OK\r\n").endsWith("Connection: close\r\n\r\n");
  }

  @Test
  void whatIsNotAGetOrHeadOfHttp1IsRefusedWithItsStatus() throws IOException {
    assertThat(answerTo("POST /metrics HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 405 ").endsWith("only GET and HEAD\n");
    assertThat(routed).isEmpty();
  }

  @Test
  void aRequestLineThatIsNotHttp1IsABadRequest() throws IOException {
    assertThat(answerTo("GET /metrics\r\n\r\n")).startsWith("HTTP/1.1 400 ").endsWith("not an HTTP/1 request line\n");
  }

  @Test
  void aRouterThatFailsGivesA500AndTheReason() throws IOException {
    assertThat(answerTo("GET /boom HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 500 ")
        .endsWith("cannot answer: java.io.IOException: rendering failed\n");
  }

  @Test
  void aHeadOverTheLimitIsRefusedUnread() throws IOException {
    String head = "GET / HTTP/1.1\r\nX: " + "a".repeat(HttpConnection.MAX_HEAD_BYTES) + "\r\n\r\n";
    assertThat(answerTo(head)).startsWith("HTTP/1.1 431 ").endsWith("a request head is at most 4096 bytes\n");
    assertThat(routed).isEmpty();
  }

  @Test
  void aRequestStillUnreadAtItsDeadlineGets408AndIsDone() throws IOException {
    send("GET / HTTP/1.1\r\n");
    connection.onReady(router, 500);

    connection.expire();

    assertThat(connection.stage()).isEqualTo(HttpConnection.Stage.DONE);
    connection.close();
    assertThat(readToEnd()).startsWith("HTTP/1.1 408 ").endsWith("the request did not arrive in time\n");
  }

  private String answerTo(String request) throws IOException {
    send(request);
    for (int i = 0; i < 100 && connection.stage() == HttpConnection.Stage.READING; i++) {
      connection.onReady(router, 0);
    }
    return readToEnd();
  }

  private void send(String text) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
    while (b.hasRemaining()) {
      client.write(b);
    }
    try {
      Thread.sleep(20); // delivered on loopback before the connection reads
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Everything the connection sent, up to its half-close. */
  private String readToEnd() throws IOException {
    ByteBuffer b = ByteBuffer.allocate(64 * 1024);
    while (client.read(b) >= 0) {
      if (!b.hasRemaining()) {
        throw new AssertionError("more than 64 KiB");
      }
    }
    return new String(b.array(), 0, b.position(), StandardCharsets.ISO_8859_1);
  }
}
