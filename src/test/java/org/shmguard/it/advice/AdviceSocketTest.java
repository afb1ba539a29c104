package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.advice.ProtocolException;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The advice socket for real: a server on a real Unix socket, real clients, a real 64 MB tmpfs. */
class AdviceSocketTest {
  private TmpfsMount shm;
  private AdviceServer server;
  private Path socket;
  private String dev;
  private final AtomicReference<String> remounted = new AtomicReference<>();

  @BeforeEach
  void start() throws IOException {
    shm = TmpfsMount.create("size=64m,mode=1777");
    dev = shm.dev().toString();
    Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "2m")), HostPaths.system()).judge();
    socket = Sandbox.MOUNTS.resolve("advice-" + ProcessHandle.current().pid() + ".sock");
    HostActions actions = new HostActions() {
      @Override
      public String remount(ShmMount mount, Long size) {
        remounted.set(mount.dev() + " " + size);
        return "remounted";
      }

      @Override
      public String clean(boolean dryRun) {
        return "cleaned";
      }
    };
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        actions);
    server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(2), 4)).start();
  }

  @AfterEach
  void stop() throws IOException {
    server.close();
    shm.close();
  }

  @Test
  void anIdleSocketLeavesItsAcceptorAsleepAndCloseStillEndsIt() throws Exception {
    AdviceClient.ask(socket, "ADVISE v1 ranks=4 dev=" + dev, Duration.ofSeconds(30));
    long before = org.shmguard.testing.ThreadWakeups.of("advice-accept");

    Thread.sleep(2000);
    long wakeups = org.shmguard.testing.ThreadWakeups.of("advice-accept") - before;

    assertThat(wakeups).as("wakeups in 2 idle seconds (a 100 ms poll would be about 20)").isLessThanOrEqualTo(2);
    server.close();
    org.shmguard.testing.Eventually.until("the acceptor thread ends after close()", Duration.ofSeconds(10),
        () -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().equals("advice-accept")));
  }

  @Test
  void adviceForDockersDefaultSizeTurnsTheShmTransportOff() throws Exception {
    String body = AdviceClient.ask(socket, "ADVISE v1 ranks=4 nccl=2.21.5 dev=" + dev + " format=env nodes=1 p2p=no",
        Duration.ofSeconds(30));

    // one node, no P2P: 8 SHM segment pairs; with SHM off, 4 proxy ops pools of the network fallback
    assertThat(body.lines()).contains("NCCL_SHM_DISABLE=1", "SHMGUARD_ADVICE=shm-disable", "SHMGUARD_DEV=" + dev,
        "SHMGUARD_SIZE_BYTES=67108864", "SHMGUARD_SHM_BUFFERS_BYTES=77135936", "SHMGUARD_NEEDED_BYTES=29361552");
    assertThat(body).contains("SHMGUARD_REASON=4 local ranks of NCCL 2.21.5 need");
  }

  @Test
  void jsonAdviceCarriesReasonAndNumbers() throws Exception {
    String body = AdviceClient.ask(socket, "ADVISE v1 ranks=8 nccl=2.28.3 dev=" + dev + " format=json", Duration.ofSeconds(30));

    var doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(body);
    assertThat(doc.get("version").asInt()).isEqualTo(1);
    assertThat(doc.get("action").asText()).isEqualTo("grow");
    // SHM off, sized as the larger case (several nodes, P2P): 8 pools and NVLS's (128 + 2560) x 8 x 2 (+4)
    assertThat(doc.get("numbers").get("growBytes").asLong()).isEqualTo(8 * 34_210_180L + 43_012L - 67_108_864L);
    assertThat(doc.get("reason").asText()).contains("must grow by at least");
  }

  @Test
  void manyClientsAtOnceAllGetAnswers() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<String>> answers = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        Callable<String> ask = () -> askRetryingWhenBusy("ADVISE v1 ranks=2 nccl=2.21.5 dev=" + dev);
        answers.add(pool.submit(ask));
      }
      for (Future<String> f : answers) {
        assertThat(f.get()).contains("SHMGUARD_ADVICE=none");
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void malformedRequestsGetErrorsAndTheServerCarriesOn() throws Exception {
    assertThat(raw("HELLO")).startsWith("ERR v1 bad-request unknown request \"HELLO\"");
    assertThat(raw("ADVISE ranks=4")).startsWith("ERR v1 unsupported-version");
    assertThat(raw("ADVISE v1 ranks=many")).startsWith("ERR v1 bad-request ranks must be a whole number");
    assertThat(raw("ADVISE v1 nccl=banana dev=" + dev)).startsWith("ERR v1 bad-request \"banana\" is not an NCCL version");
    assertThat(raw("ADVISE v1 color=red")).startsWith("ERR v1 bad-request ADVISE takes no \"color\"");
    assertThat(raw("ADVISE v1 dev=9:9999")).startsWith("ERR v1 unknown-mount 9:9999 is not a shm tmpfs shmguard watches");
    assertThat(raw("ADVISE v1 \u0001")).startsWith("ERR v1 bad-request the request must be printable ASCII");
    assertThat(raw("PING")).isEqualTo("OK v1\npong\n");
  }

  @Test
  void oversizedRequestIsCutOffWithAnError() throws Exception {
    String reply = rawBytes("ADVISE v1 " + "x".repeat(5000), false);

    assertThat(reply).startsWith("ERR v1 too-long a request line is at most 1024 bytes");
    assertThat(raw("PING")).isEqualTo("OK v1\npong\n");
  }

  @Test
  void slowClientTimesOutWhileOthersAreServed() throws Exception {
    try (SocketChannel slow = connect()) {
      slow.write(ByteBuffer.wrap("PI".getBytes(StandardCharsets.US_ASCII)));

      assertThat(raw("PING")).isEqualTo("OK v1\npong\n"); // served while the slow one waits
      assertThat(readAll(slow)).startsWith("ERR v1 timeout no complete request line within 2000 ms");
    }
  }

  @Test
  void clientsBeyondTheCapAreToldBusyAndServedLater() throws Exception {
    List<SocketChannel> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) {
        idle.add(connect());
      }
      // all four slots are taken by clients that say nothing: the fifth is refused at once
      String busy = raw("PING");
      assertThat(busy).startsWith("ERR v1 busy");
      for (SocketChannel c : idle) {
        assertThat(readAll(c)).startsWith("ERR v1 timeout");
        c.close();
      }
      assertThat(askRetryingWhenBusy("PING")).isEqualTo("pong\n");
    } finally {
      for (SocketChannel c : idle) {
        c.close();
      }
    }
  }

  @Test
  void remountFromAnOrdinaryUserIsRefusedAndFromRootIsPassedOn() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "ask-");
    String classFile = AskProcess.class.getName().replace('.', '/') + ".class";
    Path cls = dir.resolve(classFile);
    Files.createDirectories(cls.getParent());
    Files.copy(Path.of(AskProcess.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .resolve(classFile), cls, StandardCopyOption.REPLACE_EXISTING);
    Cmd.run("chmod", "-R", "a+rX", dir.toString());

    Cmd.Result nobody = Cmd.exec("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Sandbox.javaBinary(),
        "-cp", dir.toString(), AskProcess.class.getName(), socket.toString(), "REMOUNT v1 dev=" + dev + " size=134217728");
    Cmd.Result nobodyAdvice = Cmd.exec("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Sandbox.javaBinary(),
        "-cp", dir.toString(), AskProcess.class.getName(), socket.toString(), "ADVISE v1 ranks=4 dev=" + dev);

    assertThat(nobody.out()).as(nobody.err()).startsWith("ERR v1 denied REMOUNT changes the host and only root may ask it; uid 65534 ");
    assertThat(remounted.get()).isNull();
    assertThat(nobodyAdvice.out()).as(nobodyAdvice.err()).startsWith("OK v1\n").contains("SHMGUARD_ADVICE=");

    assertThat(raw("REMOUNT v1 dev=" + dev + " size=134217728")).isEqualTo("OK v1\nremounted\n");
    assertThat(remounted.get()).isEqualTo(dev + " 134217728");
    assertThat(raw("PING")).isEqualTo("OK v1\npong\n");
  }

  @Test
  void aStaleSocketFileIsReplacedAndALiveOneIsNot() throws Exception {
    AdviceResponder r = new AdviceResponder(() -> null, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());

    org.assertj.core.api.Assertions.assertThatThrownBy(() -> AdviceServer.bind(socket, r, AdviceServer.Limits.of(Duration.ofSeconds(1), 1)))
        .hasMessageContaining("another shmguard already answers on " + socket);
    assertThat(raw("PING")).isEqualTo("OK v1\npong\n");
  }

  private String askRetryingWhenBusy(String request) throws Exception {
    for (int attempt = 0; ; attempt++) {
      try {
        return AdviceClient.ask(socket, request, Duration.ofSeconds(30));
      } catch (ProtocolException e) {
        if (!e.code().equals(ProtocolException.BUSY) || attempt > 200) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
  }

  private SocketChannel connect() throws IOException {
    return SocketChannel.open(UnixDomainSocketAddress.of(socket));
  }

  private String raw(String line) throws IOException {
    return rawBytes(line, true);
  }

  private String rawBytes(String text, boolean newline) throws IOException {
    try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      c.connect(UnixDomainSocketAddress.of(socket));
      c.write(ByteBuffer.wrap((text + (newline ? "\n" : "")).getBytes(StandardCharsets.ISO_8859_1)));
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
