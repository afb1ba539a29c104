package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.SocketClient;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.slf4j.LoggerFactory;

/**
 * One ordinary user asking as fast as it can (issue 20, item 5), against a real server on a real
 * Unix socket, the flood made by uid 65534 through setpriv: its requests get "ERR v1
 * rate-limited", root and another user are answered meanwhile, the user is answered again once it
 * stops, the log has one line about it, and answers come from the last pass, not from the host.
 */
class RequestFloodTest {
  private static final int NOBODY = 65534;
  private static final int OTHER = 65533;
  private static SocketClient client;
  private TmpfsMount shm;
  private AdviceServer server;
  private Path socket;
  private final AtomicReference<Judgement> latest = new AtomicReference<>();

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

  @AfterEach
  void stop() throws IOException {
    if (server != null) {
      server.close();
    }
    if (shm != null) {
      shm.close();
    }
  }

  /** A server as the daemon makes it (the shipped caps and rate), its answers from {@link #latest}. */
  private void start() throws IOException {
    shm = TmpfsMount.create("size=1m,mode=1777");
    latest.set(pass());
    socket = Files.createDirectories(Sandbox.MOUNTS).resolve("advice-flood-" + ProcessHandle.current().pid() + ".sock");
    AdviceResponder responder = new AdviceResponder(latest::get, HostGpus::unknown, new AdviceEngine(8), HostActions.none())
        .answerChecks(new HealthAnswer(95, false, Duration.ofMinutes(2), Clock.systemUTC()));
    server = AdviceServer.bind(socket, responder, new AdviceServer.Limits(1024, Duration.ofSeconds(2),
        Duration.ofSeconds(5), 32, 4, 8)).start();
  }

  /** One pass over the test's tmpfs, as the daemon's would be. */
  private Judgement pass() {
    return Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "120s")), HostPaths.system()).judge();
  }

  private String advise() {
    return "ADVISE v1 ranks=8 dev=" + shm.dev();
  }

  @ParameterizedTest(name = "on {0} connections")
  @ValueSource(ints = {4, 128})
  void aFloodIsRateLimitedWhileRootAndAnotherUserAreAnsweredAndTheLimitIsLoggedOnce(int conns) throws Exception {
    start();
    Logger log = (Logger) LoggerFactory.getLogger(AdviceServer.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    log.addAppender(lines);
    Map<String, Long> counts;
    List<Long> rootMillis = new ArrayList<>();
    long serverCpu;
    int seconds = 6;
    try {
      long cpu0 = serverThreadsCpuNanos();
      try (SocketClient.Flood flood = client.flood(NOBODY, socket, conns, seconds, advise())) {
        Thread.sleep(1500); // the burst is spent by now
        long end = System.nanoTime() + 3_000_000_000L;
        while (System.nanoTime() < end) {
          long t0 = System.nanoTime();
          assertThat(AdviceClient.ask(socket, "CHECK v1", Duration.ofSeconds(5))).as("root's CHECK during the flood")
              .contains("SHMGUARD_HEALTH=");
          assertThat(AdviceClient.ask(socket, advise(), Duration.ofSeconds(5))).as("root's ADVISE during the flood")
              .contains("SHMGUARD_ADVICE=");
          rootMillis.add((System.nanoTime() - t0) / 1_000_000);
          assertThat(client.ask(OTHER, socket, advise())).as("another user's ADVISE during the flood")
              .startsWith("OK v1\n").contains("SHMGUARD_ADVICE=");
          Thread.sleep(100);
        }
        counts = flood.counts();
      }
      serverCpu = serverThreadsCpuNanos() - cpu0;
    } finally {
      log.detachAppender(lines);
    }
    System.out.printf("flood of %d connections, %d s: %s; the server's threads: %.1f %% of a core; root's two requests:"
        + " %s ms%n", conns, seconds, counts, 100.0 * serverCpu / (seconds * 1e9), rootMillis);

    long answered = counts.getOrDefault("OK", 0L);
    assertThat(counts.getOrDefault("ERR rate-limited", 0L)).as(counts.toString()).isPositive();
    // the burst, the refill over the flood, and a second's slack for the clock
    assertThat(answered).as(counts.toString()).isLessThanOrEqualTo(RequestRate.BURST + (seconds + 1) * RequestRate.PER_SECOND);
    assertThat(counts.getOrDefault("ERR none", 0L)).as("connections closed with no reply: " + counts).isZero();
    assertThat(rootMillis).as("root's CHECK and ADVISE, each pair").allSatisfy(ms -> assertThat(ms).isLessThan(1000));
    // The bench measures the daemon itself against 5 % (docs/performance.md); here the test JVM's
    // server threads, which also answer root's and the other user's requests, on a shared machine.
    assertThat(100.0 * serverCpu / (seconds * 1e9)).as("the server's CPU, % of a core").isLessThan(10.0);

    // nobody has stopped: its next request is answered again once a token has come back
    Thread.sleep(1000 / RequestRate.PER_SECOND + 200);
    assertThat(client.ask(NOBODY, socket, "PING")).isEqualTo("OK v1\npong\n");

    List<String> limitLines = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
        .filter(m -> m.contains("rate-limited")).toList();
    assertThat(limitLines).as("lines about the rate limit").hasSize(1);
    assertThat(limitLines.get(0)).startsWith("advice socket: uid 65534 asks more than 128 requests at once or 16 a second");
  }

  @Test
  void theRateLimitedAnswerSaysWhoAskedTooOftenAndTheServerIsAskedNothingMore() throws Exception {
    start();
    server.close();
    server = AdviceServer.bind(socket, new AdviceResponder(latest::get, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none()), new AdviceServer.Limits(1024, Duration.ofSeconds(2), Duration.ofSeconds(5), 32, 4, 8)
        .withRate(3, 1)).start();
    for (int i = 0; i < 3; i++) {
      assertThat(client.ask(NOBODY, socket, "PING")).isEqualTo("OK v1\npong\n");
    }
    long t0 = System.nanoTime();
    assertThat(client.ask(NOBODY, socket, "PING")).isEqualTo("ERR v1 rate-limited uid 65534 asked more than 3 requests at"
        + " once or 1 a second; answered again once it asks less often\n");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("held before the answer").isGreaterThan(Duration.ofMillis(800));
    assertThat(client.ask(OTHER, socket, "PING")).as("another user's own bucket").isEqualTo("OK v1\npong\n");
  }

  @Test
  void adviseAnswersFromTheLastPassNotFromTheMountAtEachRequest() throws Exception {
    start();
    String before = AdviceClient.ask(socket, advise(), Duration.ofSeconds(5));
    assertThat(before).contains("SHMGUARD_FREE_BYTES=1048576\n");

    Files.write(shm.path().resolve("filler"), new byte[512 * 1024]); // half the tmpfs, in one write
    assertThat(AdviceClient.ask(socket, advise(), Duration.ofSeconds(5))).as("before the next pass").isEqualTo(before);

    latest.set(pass());
    assertThat(AdviceClient.ask(socket, advise(), Duration.ofSeconds(5))).as("after the next pass")
        .contains("SHMGUARD_FREE_BYTES=524288\n");
  }

  /** CPU time of the server's threads: its acceptor and the threads that serve clients. */
  private static long serverThreadsCpuNanos() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    long sum = 0;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith("advice-")) {
        long n = mx.getThreadCpuTime(t.getId());
        sum += Math.max(0, n);
      }
    }
    return sum;
  }
}
