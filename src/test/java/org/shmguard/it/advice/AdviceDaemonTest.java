package org.shmguard.it.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.ProtocolException;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.PyClient;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * `shmguard daemon` in its own JVM serving advice on its socket and keeping advice.env, and
 * `shmguard advise` with and without it.
 */
class AdviceDaemonTest {
  @Test
  void theDaemonAnswersOnItsSocketKeepsAdviceEnvAndRemovesTheSocketOnStop() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "daemon-");
    Path socket = dir.resolve("advice.sock");
    Path envFile = dir.resolve("advice.env");
    Path config = TestConfig.write("mounts: [/dev/shm]\nreap:\n  dryRun: true\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\nadvice:\n  socket: " + socket + "\n  envFile: " + envFile + "\n");
    Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
    try {
      String body = Eventually.answered(() -> AdviceClient.ask(socket, "ADVISE v1 ranks=4 nccl=2.21.5 format=env", Duration.ofSeconds(10)));
      assertThat(body).contains("NCCL_SHM_DISABLE=1", "SHMGUARD_MOUNT=/dev/shm");
      String env = Eventually.answered(() -> Files.readString(envFile));
      assertThat(env).contains("SHMGUARD_ADVICE=", "SHMGUARD_MOUNT=/dev/shm", "SHMGUARD_REASON=");
      try (var files = Files.list(dir)) {
        assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
      }

      CliRun viaDaemon = CliRun.of("advise", "--socket", socket.toString(), "--local-ranks", "4", "--nccl-version", "2.21.5");
      assertThat(viaDaemon.status()).as(viaDaemon.err()).isZero();
      assertThat(viaDaemon.err()).isEmpty();
      assertThat(viaDaemon.out()).contains("NCCL_SHM_DISABLE=1");

      // The Java-free client: the same answer from the same daemon, and its health verdict from the last pass.
      PyClient py = PyClient.run(Duration.ofSeconds(30), Map.of("SHMGUARD_ADVICE_SOCKET", socket.toString()),
          "advise", "--local-ranks", "4", "--nccl-version", "2.21.5");
      assertThat(py.status()).as(py.err()).isZero();
      assertThat(py.out()).isEqualTo(viaDaemon.out());
      PyClient check = PyClient.run(Duration.ofSeconds(30), Map.of("SHMGUARD_ADVICE_SOCKET", socket.toString()), "check");
      CliRun ownPass = CliRun.of("check", "-c", config.toString());
      assertThat(check.status()).as(check.out()).isEqualTo(ownPass.status());
      assertThat(check.out()).hasLineCount(1).startsWith(ownPass.out().substring(0, ownPass.out().indexOf(':') + 1));
      assertThat(AdviceClient.ask(socket, "CHECK v1", Duration.ofSeconds(10))).contains("SHMGUARD_PASS_AGE_SECONDS=");
    } finally {
      daemon.destroy(); // SIGTERM, as systemd stops it
      assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(socket).doesNotExist();
    assertThat(Files.readString(dir.resolve("daemon.log"), StandardCharsets.UTF_8)).contains("advice socket listening on " + socket);
  }

  @Test
  void rootGrowsATmpfsAndCleansOverTheSocketAndTheCooldownRefusesASecondGrow() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "remount-");
    Path socket = dir.resolve("advice.sock");
    try (TmpfsMount shm = TmpfsMount.create("size=1m,mode=1777,nosuid,nodev")) {
      // Not a dry run: a dry run remounts nothing, not even for root (DaemonDryRunTest); no file here has a name to reap.
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
          + "daemon:\n  interval: 1s\nadvice:\n  socket: " + socket + "\n  envFile: " + dir.resolve("advice.env") + "\n"
          + "remount:\n  enabled: true\n  targetSize: 2M\n  maxSize: 16M\n  cooldown: 1h\n");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
      try {
        String grown = Eventually.answered(() -> AdviceClient.ask(socket, "REMOUNT v1 dev=" + shm.dev() + " size=8388608", Duration.ofSeconds(30)));
        assertThat(grown).startsWith("grew " + shm.path() + " from 1.0M to 8.0M");
        assertThat(Cmd.run("findmnt", "-n", "-o", "OPTIONS", shm.path().toString())).contains("nosuid", "nodev", "size=8192k");

        assertThatThrownBy(() -> AdviceClient.ask(socket, "REMOUNT v1 dev=" + shm.dev() + " size=16777216", Duration.ofSeconds(30)))
            .isInstanceOf(ProtocolException.class).hasMessageContaining("remount.cooldown is 1h");
        assertThat(AdviceClient.ask(socket, "CLEAN v1 dry-run=true", Duration.ofSeconds(30)))
            .startsWith("would reap 0 of 0 candidates");
        assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(30))).isEqualTo("pong\n");
      } finally {
        daemon.destroy();
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
      }
      String log = Files.readString(dir.resolve("daemon.log"));
      assertThat(log).as("a grow is told once, as its event").contains("grew " + shm.path() + " from 1.0M to 8.0M")
          .doesNotContain("remounting " + shm.path()).doesNotContain("remounted " + shm.path());
    }
  }

  @Test
  void socketActivationBySdListenFdsHandsTheDaemonItsSocket() throws Exception {
    assertSocketActivationWorks(List.of());
  }

  @Test
  void socketActivationOnStandardInputHandsTheDaemonItsSocket() throws Exception {
    // --inetd: the listening socket becomes the child's standard input, as StandardInput=socket does.
    assertSocketActivationWorks(List.of("--inetd"));
  }

  private void assertSocketActivationWorks(List<String> activatorOptions) throws Exception {
    Sandbox.require();
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-socket-activate")), "needs systemd-socket-activate (package systemd)");
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "activated-");
    Path socket = dir.resolve("activated.sock");
    Path config = TestConfig.write("mounts: [/dev/shm]\nreap:\n  dryRun: true\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\nadvice:\n  socket: " + dir.resolve("unused.sock") + "\n  envFile: " + dir.resolve("advice.env") + "\n");
    List<String> cmd = new ArrayList<>(List.of("systemd-socket-activate"));
    cmd.addAll(activatorOptions);
    cmd.addAll(List.of("-l", socket.toString(), Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString()));
    Process activator = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
    try {
      assertThat(Eventually.answered(() -> {
        if (!Files.exists(socket)) {
          throw new IOException("not listening yet");
        }
        return AdviceClient.ask(socket, "ADVISE v1 ranks=4 nccl=2.21.5", Duration.ofSeconds(10));
      })).contains("NCCL_SHM_DISABLE=1");
      assertThat(dir.resolve("unused.sock")).doesNotExist();
    } finally {
      activator.toHandle().descendants().forEach(ProcessHandle::destroy);
      activator.destroy();
      assertThat(activator.waitFor(60, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(Files.readString(dir.resolve("daemon.log"))).contains("using the listening socket systemd passed, " + socket);
  }

  @Test
  void adviseWithoutADaemonWorksItOutLocallyAndSaysSo() {
    Sandbox.require();

    CliRun r = CliRun.of("advise", "--socket", "/run/shmguard-test/nobody-here.sock", "--local-ranks", "4",
        "--nccl-version", "2.21.5", "--format", "json");

    assertThat(r.status()).as(r.err()).isZero();
    assertThat(r.err()).contains("no daemon answers on /run/shmguard-test/nobody-here.sock").contains("worked out here");
    assertThat(r.json().get("action").asText()).isEqualTo("shm-disable");
    assertThat(r.json().get("mount").get("name").asText()).isEqualTo("/dev/shm");
  }

  @Test
  void adviseDaemonOnlyFailsWithoutADaemon() {
    Sandbox.require();

    CliRun r = CliRun.of("advise", "--daemon-only", "--socket", "/run/shmguard-test/nobody-here.sock");

    assertThat(r.status()).isEqualTo(1);
    assertThat(r.out()).isEmpty();
  }

  @Test
  void badOptionsAreUsageErrors() {
    assertThat(CliRun.of("advise", "--nccl-version", "x.y").status()).isEqualTo(2);
    assertThat(CliRun.of("advise", "--format", "xml").status()).isEqualTo(2);
    assertThat(CliRun.of("advise", "--local-ranks", "0").status()).isEqualTo(2);
  }
}
