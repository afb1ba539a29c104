package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;

/**
 * The shipped epilog (packaging/slurm/epilog) called as slurmd calls it: as root, with only
 * Slurm's variables in its environment, and an outer timeout, against each way the daemon can
 * fail to help. It must always exit 0 (Slurm drains a node whose epilog fails) and be quick.
 * SlurmTest runs it from a real slurmd against the real daemon.
 */
class SlurmEpilogTest {
  private static final Path EPILOG = Path.of("packaging/slurm/epilog").toAbsolutePath();

  @TempDir Path dir;

  @Test
  void withoutADaemonItSaysSoAndSucceedsAtOnce() {
    long start = System.nanoTime();
    Cmd.Result r = epilog(dir.resolve("advice.sock"), "20");

    assertThat(r.status()).isZero();
    assertThat(r.err()).isEqualTo("shmguard-epilog: job 4242: no shmguard daemon socket at " + dir.resolve("advice.sock")
        + "; nothing asked\n");
    assertThat(millisSince(start)).isLessThan(5_000);
  }

  @Test
  void aDaemonThatNeverAnswersCostsTheJobNoMoreThanTheTimeoutAndSucceeds() throws Exception {
    requirePython();
    Path sock = dir.resolve("silent.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(sock));
      long start = System.nanoTime();
      Cmd.Result r = epilog(sock, "2");

      assertThat(r.status()).isZero();
      assertThat(r.err()).startsWith("shmguard-epilog: job 4242: ").contains("2 s");
      assertThat(millisSince(start)).isBetween(1_500L, 10_000L);
    }
  }

  @Test
  void aRefusalIsReportedAndTheEpilogStillSucceeds() throws Exception {
    requirePython();
    Path sock = dir.resolve("refusing.sock");
    AtomicReference<String> asked = new AtomicReference<>();
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(sock));
      Thread answer = new Thread(() -> {
        try (SocketChannel c = server.accept()) {
          ByteBuffer in = ByteBuffer.allocate(128);
          c.read(in);
          asked.set(new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII));
          c.write(ByteBuffer.wrap("ERR v1 failed the daemon is still starting; ask again\n".getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
          asked.set("failed: " + e);
        }
      });
      answer.start();
      Cmd.Result r = epilog(sock, "20");
      answer.join(10_000);

      assertThat(asked.get()).isEqualTo("CLEAN v1\n");
      assertThat(r.status()).isZero();
      assertThat(r.err()).isEqualTo("shmguard-epilog: job 4242: the daemon did not clean: "
          + "ERR v1 failed the daemon is still starting; ask again\n");
    }
  }

  @Test
  void theEpilogPassesShellcheck() {
    assumeTrue(java.nio.file.Files.isExecutable(Path.of("/usr/bin/shellcheck")), "needs shellcheck");
    Cmd.Result r = Cmd.exec("shellcheck", EPILOG.toString());
    assertThat(r.status()).as(r.out()).isZero();
  }

  private static void requirePython() {
    assumeTrue(java.nio.file.Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3, which the epilog talks to the socket with");
  }

  /** As slurmd runs an epilog: a clean environment of Slurm's variables, bounded from outside. */
  private static Cmd.Result epilog(Path socket, String limit) {
    return Cmd.exec("/usr/bin/timeout", "60", "/usr/bin/env", "-i", "SLURM_JOB_ID=4242", "SLURM_JOB_UID=65534",
        "SLURM_JOB_USER=nobody", "SLURM_SCRIPT_CONTEXT=epilog_slurmd", "SLURMD_NODENAME=node1",
        "SHMGUARD_ADVICE_SOCKET=" + socket, "SHMGUARD_EPILOG_TIMEOUT=" + limit, EPILOG.toString());
  }

  private static long millisSince(long start) {
    return (System.nanoTime() - start) / 1_000_000;
  }
}
