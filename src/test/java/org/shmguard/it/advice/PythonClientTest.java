package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.PyClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * packaging/share/shmguard_client.py against a real advice socket: it prints what the daemon
 * answers, byte for byte what `shmguard advise` prints from the same daemon, and asks about the
 * /dev/shm it sees.
 */
class PythonClientTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private Path dir;
  private Path socket;
  private AdviceServer server;

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    PyClient.require();
    dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "pyclient-");
    socket = dir.resolve("advice.sock");
  }

  @AfterEach
  void tearDown() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  private void startDaemon() throws IOException {
    // The sandbox's private /dev/shm, watched as the daemon would watch it.
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n")),
        HostPaths.system()).judge();
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());
    server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();
  }

  @ParameterizedTest
  @ValueSource(strings = {"env", "json"})
  void theClientPrintsExactlyWhatShmguardAdvisePrintsFromTheSameDaemon(String format) throws Exception {
    startDaemon();

    PyClient py = PyClient.run(DEADLINE, Map.of("SHMGUARD_ADVICE_SOCKET", socket.toString()),
        "advise", "--local-ranks", "4", "--nccl-version", "2.21.5", "--format", format);
    CliRun java = CliRun.of("advise", "--daemon-only", "--socket", socket.toString(), "--local-ranks", "4",
        "--nccl-version", "2.21.5", "--format", format);

    assertThat(py.status()).as(py.err()).isZero();
    assertThat(java.status()).as(java.err()).isZero();
    assertThat(py.out()).isEqualTo(java.out());
    assertThat(py.out()).contains(format.equals("env") ? "NCCL_SHM_DISABLE=1\n" : "\"NCCL_SHM_DISABLE\":\"1\"");
    assertThat(py.err()).isEmpty();
  }

  @Test
  void bothClientsSayWhenTheDaemonRefusesThisUserForAskingTooOften() throws Exception {
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n")),
        HostPaths.system()).judge();
    server = AdviceServer.bind(socket, new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none()), AdviceServer.Limits.of(Duration.ofSeconds(5), 4).withRate(2, 1)).start();
    String limited = "uid 0 asked more than 2 requests at once or 1 a second; answered again once it asks less often";
    AdviceClient.ask(socket, "PING", Duration.ofSeconds(5));
    AdviceClient.ask(socket, "PING", Duration.ofSeconds(5)); // root's bucket is empty now

    PyClient py = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString());
    assertThat(py.status()).as(py.err()).isEqualTo(75);
    assertThat(py.out()).isEmpty();
    assertThat(py.err()).isEqualTo("shmguard_client: the daemon limits how often one user may ask, and refused this"
        + " request (rate-limited): " + limited + "\n");

    AdviceClient.ask(socket, "PING", Duration.ofSeconds(5)); // the token that came back during the hold
    CliRun java = CliRun.of("advise", "--daemon-only", "--socket", socket.toString());
    assertThat(java.status()).as(java.err()).isEqualTo(75);
    assertThat(java.err()).isEqualTo("shmguard: the daemon limits how often one user may ask, and refused this"
        + " request (rate-limited): " + limited + "\n");

    AdviceClient.ask(socket, "PING", Duration.ofSeconds(5));
    CliRun fallback = CliRun.of("advise", "--socket", socket.toString(), "--shm", "/dev/shm");
    assertThat(fallback.status()).as(fallback.err()).isZero();
    assertThat(fallback.err()).startsWith("shmguard: the daemon limits how often one user may ask").contains(
        "; advice worked out here from /dev/shm alone");
    assertThat(fallback.out()).contains("SHMGUARD_ADVICE=");
  }

  @Test
  void withoutAJobShapeBothClientsGetTheSameDefaultAdvice() throws Exception {
    startDaemon();

    PyClient py = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString());
    CliRun java = CliRun.of("advise", "--daemon-only", "--socket", socket.toString());

    assertThat(py.status()).as(py.err()).isZero();
    assertThat(py.out()).isEqualTo(java.out()).contains("SHMGUARD_DEV=");
  }

  @Test
  void theClientNamesTheMountItSeesByItsDevice() throws Exception {
    startDaemon();
    try (TmpfsMount other = TmpfsMount.create("size=1m,mode=1777")) {
      // A tmpfs the daemon does not watch: the daemon says so, the client prints no advice.
      PyClient py = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString(), "--shm", other.path().toString());

      assertThat(py.status()).isEqualTo(1);
      assertThat(py.out()).isEmpty();
      assertThat(py.err()).isEqualTo("shmguard_client: the daemon answered: unknown-mount: " + other.dev()
          + " is not a shm tmpfs shmguard watches\n");
    }
  }

  @Test
  void noDaemonIsExitOneWithTheReasonOnStderr() {
    PyClient py = PyClient.run(DEADLINE, Map.of("SHMGUARD_ADVICE_SOCKET", socket.toString()), "advise");

    assertThat(py.status()).isEqualTo(1);
    assertThat(py.out()).isEmpty();
    assertThat(py.err()).startsWith("shmguard_client: no daemon answers on " + socket + " (No such file or directory)");
  }

  @Test
  void aDaemonThatNeverAnswersIsGivenUpAtTheTimeout() throws Exception {
    try (ServerSocketChannel mute = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      mute.bind(UnixDomainSocketAddress.of(socket)); // listening, never accepting: connect works, no reply comes

      PyClient py = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString(), "--timeout", "0.5");

      assertThat(py.status()).isEqualTo(1);
      assertThat(py.err()).isEqualTo("shmguard_client: no answer on " + socket + " within 0.5 s\n");
      assertThat(py.took()).isLessThan(Duration.ofSeconds(10));
    } finally {
      Files.deleteIfExists(socket);
    }
  }

  @Test
  void valuesThatWouldAddWordsToTheRequestLineAreUsageErrors() throws Exception {
    startDaemon();

    PyClient ranks = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString(), "--local-ranks", "4 dev=0:1");
    PyClient nccl = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString(), "--nccl-version", "2.21.5\nCLEAN");
    PyClient format = PyClient.run(DEADLINE, Map.of(), "advise", "--socket", socket.toString(), "--format", "xml");

    assertThat(ranks.status()).isEqualTo(2);
    assertThat(ranks.err()).startsWith("shmguard_client: --local-ranks must be a whole number");
    assertThat(nccl.status()).isEqualTo(2);
    assertThat(format.status()).isEqualTo(2);
    assertThat(ranks.out() + nccl.out() + format.out()).isEmpty();
  }
}
