package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.AdviceResponder;
import org.shmguard.advice.AdviceServer;
import org.shmguard.advice.HostActions;
import org.shmguard.engine.Engine;
import org.shmguard.gpu.HostGpus;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.AdviceEngine;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * packaging/bin/shmguard-launch for real: a real daemon socket (or none, or one that never
 * answers), asked through the python client or, where that is missing, the real `shmguard
 * advise` in its own JVM, and a real command whose arguments, environment and exit status the
 * test reads back.
 */
class LaunchWrapperTest {
  private static final Path WRAPPER = Path.of("packaging/bin/shmguard-launch").toAbsolutePath();
  private static final Path CLIENT = Path.of("packaging/share/shmguard_client.py").toAbsolutePath();

  /** How the wrapper asks: through the python client, or (client absent) through `shmguard advise`. */
  enum Asker {
    PYTHON(CLIENT.toString()), JAVA("/nonexistent/shmguard_client.py");

    final String client;

    Asker(String client) {
      this.client = client;
    }
  }
  /** Prints each argument in brackets and the two NCCL variables, then exits 7. */
  private static final List<String> PROBE = List.of("/bin/sh", "-c",
      "for a in \"$@\"; do printf '[%s]\\n' \"$a\"; done; echo \"SHM=${NCCL_SHM_DISABLE-unset}\";"
          + " echo \"CUMEM=${NCCL_CUMEM_HOST_ENABLE-unset}\"; exit 7",
      "probe", "two words", "it's", "\"quoted\"", "", "$HOME", "-*");

  private Path dir;
  private Path socket;
  private AdviceServer server;

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "launch-");
    socket = dir.resolve("advice.sock");
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path shmguard = bin.resolve("shmguard");
    Files.writeString(shmguard, "#!/bin/sh\nexec '" + Sandbox.javaBinary() + "' -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp '"
        + System.getProperty("java.class.path") + "' org.shmguard.cli.Main \"$@\"\n");
    Files.setPosixFilePermissions(shmguard, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void tearDown() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  private void startDaemon() throws IOException {
    // The sandbox's private /dev/shm (64 MB), watched as the daemon would watch it.
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n")),
        HostPaths.system()).judge();
    AdviceResponder responder = new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none());
    server = AdviceServer.bind(socket, responder, AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();
  }

  @ParameterizedTest
  @EnumSource(Asker.class)
  void withTheDaemonUpItSetsTheAdviceAndKeepsArgumentsAndExitStatus(Asker asker) throws Exception {
    startDaemon();

    Run r = launch(asker, Map.of(), "--local-ranks", "4", "--nccl-version", "2.21.5", "--");

    assertThat(r.status).as(r.err).isEqualTo(7);
    assertThat(r.out.lines()).containsExactly("[two words]", "[it's]", "[\"quoted\"]", "[]", "[$HOME]", "[-*]",
        "SHM=1", "CUMEM=unset");
    assertThat(r.err.lines()).hasSize(1);
    assertThat(r.err.strip()).hasSizeLessThanOrEqualTo(160)
        .matches("shmguard-launch: set NCCL_SHM_DISABLE=1 \\[advice: shm-disable\\]: needs \\d+\\.\\d MiB of \\S+, "
            + "\\d+\\.\\d MiB free \\(--verbose: why\\)");
  }

  /** The whole sizing (every buffer, and why this advice) on request, still one line: the flag or the variable. */
  @ParameterizedTest
  @EnumSource(Asker.class)
  void verboseOrItsVariableGivesTheWholeSizingOnOneLine(Asker asker) throws Exception {
    startDaemon();

    Run flag = launch(asker, Map.of(), "--verbose", "--local-ranks", "4", "--nccl-version", "2.21.5", "--");
    Run variable = launch(asker, Map.of("SHMGUARD_LAUNCH_VERBOSE", "1"), "--local-ranks", "4", "--nccl-version", "2.21.5");

    for (Run r : List.of(flag, variable)) {
      assertThat(r.status).as(r.err).isEqualTo(7);
      assertThat(r.out).contains("SHM=1\n");
      assertThat(r.err.lines()).hasSize(1);
      assertThat(r.err).startsWith("shmguard-launch: set NCCL_SHM_DISABLE=1 [advice: shm-disable]: 4 local ranks of NCCL 2.21.5 need")
          .contains("with the SHM transport off");
      assertThat(r.err.length()).isGreaterThan(160);
    }
  }

  /** A mount name far longer than the line: the line is cut at 160 characters, visibly. */
  @Test
  void aLongMountNameIsCutToTheLineLimit() throws Exception {
    Path bin = Files.createDirectories(dir.resolve("long-bin"));
    String mount = "/var/lib/kubelet/pods/" + "0123456789abcdef".repeat(8) + "/volumes/kubernetes.io~empty-dir/dshm";
    Path fake = bin.resolve("fake_client.py");
    Files.writeString(fake, "import sys\nprint('NCCL_SHM_DISABLE=1\\nSHMGUARD_ADVICE=shm-disable\\nSHMGUARD_MOUNT=" + mount
        + "\\nSHMGUARD_REASON=why\\nSHMGUARD_NEEDED_BYTES=9663676\\nSHMGUARD_FREE_BYTES=2097152')\n");

    Run r = launch(Asker.PYTHON, Map.of("SHMGUARD_CLIENT", fake.toString()), "--local-ranks", "4");

    assertThat(r.status).isEqualTo(7);
    assertThat(r.err.lines()).hasSize(1);
    assertThat(r.err.strip()).hasSize(160).endsWith("...").startsWith("shmguard-launch: set NCCL_SHM_DISABLE=1 "
        + "[advice: shm-disable]: needs 9.2 MiB of /var/lib/kubelet/pods/");
  }

  /** A mount name in UTF-8 (two and three bytes a character): the line is cut at 160 characters, never inside one. */
  @Test
  void aLongMountNameInUtf8IsCutAtCharactersNotBytes() throws Exception {
    Path bin = Files.createDirectories(dir.resolve("utf8-bin"));
    String mount = "/srv/équipe-日本/" + "données-".repeat(20) + "/dshm";
    Path fake = bin.resolve("fake_client.py");
    Files.writeString(fake, "# -*- coding: utf-8 -*-\nimport sys\nsys.stdout.buffer.write('NCCL_SHM_DISABLE=1\\nSHMGUARD_ADVICE=shm-disable\\n"
        + "SHMGUARD_MOUNT=" + mount + "\\nSHMGUARD_REASON=why\\nSHMGUARD_NEEDED_BYTES=9663676\\nSHMGUARD_FREE_BYTES=2097152\\n'.encode())\n");

    Run r = launch(Asker.PYTHON, Map.of("SHMGUARD_CLIENT", fake.toString()), "--local-ranks", "4");

    assertThat(r.err.lines()).hasSize(1);
    String line = r.err.strip();
    assertThat(line.codePointCount(0, line.length())).as(line).isEqualTo(160);
    assertThat(line).endsWith("...").contains("needs 9.2 MiB of /srv/équipe-日本/données-").doesNotContain("\uFFFD");
  }

  @ParameterizedTest
  @EnumSource(Asker.class)
  void aSingleNodeJobWithP2pIsToldItFits(Asker asker) throws Exception {
    startDaemon();

    // 8 ranks on one node with P2P: no SHM segment, no proxy ops pool, only NVLS's 43 KB
    Run r = launch(asker, Map.of("SHMGUARD_P2P", "yes"), "--local-ranks", "8", "--nccl-version", "2.28.3", "--nodes", "1",
        "--processes", "8", "--");

    assertThat(r.status).as(r.err).isEqualTo(7);
    assertThat(r.out).contains("SHM=unset\n");
    assertThat(r.err).startsWith("shmguard-launch: set nothing [advice: none]: needs 0.0 MiB of ");
    Run verbose = launch(asker, Map.of("SHMGUARD_P2P", "yes", "SHMGUARD_LAUNCH_VERBOSE", "1"), "--local-ranks", "8",
        "--nccl-version", "2.28.3", "--nodes", "1", "--processes", "8", "--");
    assertThat(verbose.err).startsWith("shmguard-launch: set nothing [advice: none]: 8 local ranks of NCCL 2.28.3 need at most 42.0 KiB")
        .contains("P2P between all GPUs");
  }

  @Test
  void aUserOverTheRequestRateIsToldSoAndTheCommandRunsUnchanged() throws Exception {
    Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\nreap:\n  requireHostPidNamespace: false\n")),
        HostPaths.system()).judge();
    server = AdviceServer.bind(socket, new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
        HostActions.none()), AdviceServer.Limits.of(Duration.ofSeconds(5), 4).withRate(1, 1)).start();
    assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(5))).isEqualTo("pong\n"); // root's one token

    Run r = launch(Asker.PYTHON, Map.of(), "--local-ranks", "4", "--nccl-version", "2.21.5", "--");

    assertThat(r.status).as(r.err).isEqualTo(7);
    assertThat(r.out).contains("SHM=unset\n");
    assertThat(r.err).isEqualTo("shmguard-launch: the shmguard daemon refused: this user asked for advice too often"
        + " (rate-limited); running the command unchanged\n");
  }

  @Test
  void badShapeOptionsAreUsageErrors() throws Exception {
    Run r = launch(Asker.PYTHON, Map.of(), "--p2p", "maybe", "--");

    assertThat(r.status).isEqualTo(2);
    assertThat(r.err).contains("--p2p must be yes or no, not 'maybe'");
  }

  @ParameterizedTest
  @EnumSource(Asker.class)
  void theUsersOwnSettingWins(Asker asker) throws Exception {
    startDaemon();

    Run r = launch(asker, Map.of("NCCL_SHM_DISABLE", "0"), "--local-ranks", "4", "--nccl-version", "2.21.5");

    assertThat(r.status).isEqualTo(7);
    assertThat(r.out).contains("SHM=0\n");
    assertThat(r.err).startsWith("shmguard-launch: set nothing (kept your own NCCL_SHM_DISABLE) [advice: shm-disable]");
  }

  @ParameterizedTest
  @EnumSource(Asker.class)
  void withTheDaemonDownTheCommandRunsUnchanged(Asker asker) throws Exception {
    Run r = launch(asker, Map.of(), "--local-ranks", "4");

    assertThat(r.status).isEqualTo(7);
    assertThat(r.out.lines()).containsExactly("[two words]", "[it's]", "[\"quoted\"]", "[]", "[$HOME]", "[-*]",
        "SHM=unset", "CUMEM=unset");
    assertThat(r.err).isEqualTo("shmguard-launch: no advice from the shmguard daemon (not running, not reachable or too slow); running the command unchanged\n");
  }

  /**
   * A job root entered with plain chroot has its own tmpfs at its /dev/shm, which the daemon does
   * not watch: the daemon answers unknown-mount, and the wrapper says that, not "not running".
   */
  @ParameterizedTest
  @EnumSource(Asker.class)
  void aDevShmTheDaemonDoesNotWatchIsSaidSoNotCalledDown(Asker asker) throws Exception {
    try (org.shmguard.testing.TmpfsMount other = org.shmguard.testing.TmpfsMount.create("size=1m")) {
      Judgement j = Engine.create(TestConfig.load(TestConfig.write("mounts: [" + other.path() + "]\nreap:\n"
          + "  requireHostPidNamespace: false\n")), HostPaths.system()).judge();
      server = AdviceServer.bind(socket, new AdviceResponder(() -> j, HostGpus::unknown, new AdviceEngine(8),
          HostActions.none()), AdviceServer.Limits.of(Duration.ofSeconds(5), 4)).start();

      Run r = launch(asker, Map.of(), "--local-ranks", "4");

      assertThat(r.status).isEqualTo(7);
      assertThat(r.out).contains("SHM=unset");
      assertThat(r.err).isEqualTo("shmguard-launch: the shmguard daemon runs but does not watch this /dev/shm (a chroot's? "
          + "add it to mounts:); running the command unchanged\n");
    }
  }

  @ParameterizedTest
  @EnumSource(Asker.class)
  void aDaemonThatNeverAnswersIsNotWaitedForLong(Asker asker) throws Exception {
    // Bound and listening, but nobody accepts: connect works, no reply ever comes.
    try (ServerSocketChannel mute = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      mute.bind(UnixDomainSocketAddress.of(socket));

      long start = System.nanoTime();
      Run r = launch(asker, Map.of(), "--local-ranks", "4");
      if (asker == Asker.PYTHON) {
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8)); // 2 s for the daemon
      }

      assertThat(r.status).isEqualTo(7);
      assertThat(r.out).contains("SHM=unset");
      assertThat(r.err).contains("running the command unchanged");
    } finally {
      Files.deleteIfExists(socket);
    }
  }

  @Test
  void withNeitherThePythonClientNorShmguardTheCommandRunsUnchangedAndItSaysSoOnce() throws Exception {
    startDaemon();
    Path empty = Files.createDirectories(dir.resolve("empty"));

    Run r = launch(Asker.JAVA, Map.of("PATH", empty + ":/bin"), "--local-ranks", "4");

    assertThat(r.status).isEqualTo(7);
    assertThat(r.out).contains("SHM=unset");
    assertThat(r.err).isEqualTo("shmguard-launch: neither python3 with shmguard_client.py nor shmguard is here;"
        + " running the command unchanged\n");
  }

  @Test
  void theWrapperIsPosixShAndShellcheckClean() {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/shellcheck")), "needs shellcheck (.ci/run installs it)");

    org.shmguard.testing.Cmd.Result r = org.shmguard.testing.Cmd.exec("shellcheck", "--shell=sh", "--severity=style", WRAPPER.toString());

    assertThat(r.status()).as(r.out() + r.err()).isZero();
  }

  @Test
  void noCommandIsAUsageError() throws Exception {
    Run r = launch(Asker.PYTHON, Map.of(), List.of("--local-ranks", "4"));

    assertThat(r.status).isEqualTo(2);
    assertThat(r.err).contains("no command given");
  }

  private record Run(int status, String out, String err) {}

  private Run launch(Asker asker, Map<String, String> env, String... options) throws Exception {
    List<String> args = new ArrayList<>(List.of(options));
    args.addAll(PROBE);
    return launch(asker, env, args);
  }

  private Run launch(Asker asker, Map<String, String> env, List<String> args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(WRAPPER.toString()));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().remove("NCCL_SHM_DISABLE");
    pb.environment().remove("NCCL_CUMEM_HOST_ENABLE");
    pb.environment().put("PATH", dir.resolve("bin") + ":/usr/bin:/bin");
    pb.environment().put("SHMGUARD_ADVICE_SOCKET", socket.toString());
    pb.environment().put("SHMGUARD_CLIENT", asker.client);
    pb.environment().putAll(env);
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
  }
}
