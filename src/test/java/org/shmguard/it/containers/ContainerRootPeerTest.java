package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Podman;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * Root of a container without a user namespace (podman with runc, as root, the socket directory
 * bind-mounted in as advice-clients.md tells users to) is uid 0 on the socket too, but not root of
 * the host: the daemon (on the host, the test sandbox, with remounting on) refuses it REMOUNT of
 * the host's /dev/shm, CLEAN and SCAN, and the host's /dev/shm keeps its size; it still answers
 * its ADVISE, about the container's own /dev/shm when the request names no device. The sandbox's
 * own root is still served.
 */
class ContainerRootPeerTest {
  private static final Path ROOT = org.shmguard.testing.PythonRoot.PATH;
  private static final long MIB = 1L << 20;
  /** systemd/shmguard.service's CapabilityBoundingSet. */
  private static final String UNIT_CAPS = "+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";
  /** A client as any program would write one: one request line, the reply to its end. */
  private static final String ASK = "import socket, sys\n"
      + "s = socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ns.sendall((sys.argv[2] + '\\n').encode())\n"
      + "out = b''\nwhile True:\n  b = s.recv(4096)\n  if not b:\n    break\n  out += b\nsys.stdout.write(out.decode())\n";

  private Path work;
  private Path sockDir;
  private Process daemon;
  private Podman podman;
  private String name;

  @BeforeEach
  void setUp() throws Exception {
    Sandbox.require();
    org.shmguard.testing.PythonRoot.prepare();
    work = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "peer-");
    name = "peer-" + work.getFileName().toString().substring("peer-".length());
    sockDir = Files.createDirectories(work.resolve("run-shmguard"));
    Files.setPosixFilePermissions(sockDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"
        + "advice:\n  socket: " + sockDir.resolve("advice.sock") + "\n  envFile: " + work.resolve("advice.env") + "\n"
        + "remount:\n  enabled: true\n  targetSize: 160M\n  maxSize: 192M\n  cooldown: 1h\n");
    // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
    daemon = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
        "--bounding-set", "-all," + UNIT_CAPS, Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(work.resolve("daemon.log").toFile()).start();
    Eventually.until(() -> "the daemon's first answer; its log: " + log(), Duration.ofSeconds(60),
        () -> Files.exists(sockDir.resolve("advice.sock")) && hostAsk("CHECK v1").startsWith("OK v1"));

    podman = Podman.onRoot(ROOT);
    podman.run(List.of("--name", name, "-v", sockDir + ":/run/shmguard:ro"), "sleep", "600");
    Eventually.until("the container running", Duration.ofSeconds(60), () -> podman.exec(name, List.of(), "true").status() == 0);
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (podman != null) {
        podman.close();
      }
    } finally {
      try {
        if (daemon != null) {
          daemon.destroy();
          assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
      } finally {
        deleteTree(work);
      }
    }
  }

  @Test
  void containerRootIsRefusedRemountCleanAndScanAndTheHostsShmKeepsItsSize() throws Exception {
    String hostDev = Cmd.run("mountpoint", "-d", "/dev/shm").strip();
    String hostSize = Cmd.run("df", "-B1", "--output=size", "/dev/shm");
    assertThat(hostSize).contains(Long.toString(64 * MIB));
    String why = "this peer is uid 0 but it is root in another mount namespace, and may ask ADVISE, CHECK and PING\n";

    assertThat(inside("REMOUNT v1 dev=" + hostDev + " size=" + 128 * MIB))
        .isEqualTo("ERR v1 denied REMOUNT changes the host and needs root of the host; " + why);
    assertThat(inside("CLEAN v1 dry-run=true")).isEqualTo("ERR v1 denied CLEAN changes the host and needs root of the host; " + why);
    assertThat(inside("SCAN v1")).isEqualTo("ERR v1 denied SCAN shows every user's processes and needs root of the host; " + why);
    // An ADVISE without dev= is about the /dev/shm the asking process sees: the container's own tmpfs, never the host's.
    String containerDev = inside(List.of("python3", "-I", "-S", "-c",
        "import os; d = os.stat('/dev/shm').st_dev; print('%d:%d' % (os.major(d), os.minor(d)))")).strip();
    assertThat(containerDev).isNotEqualTo(hostDev);
    Eventually.until("a pass that has seen the container's /dev/shm", Duration.ofSeconds(30),
        () -> inside("ADVISE v1 ranks=4").startsWith("OK v1\n"));
    assertThat(inside("ADVISE v1 ranks=4")).contains("SHMGUARD_ADVICE=", "SHMGUARD_DEV=" + containerDev + "\n",
        "SHMGUARD_MOUNT=podman:").doesNotContain("SHMGUARD_DEV=" + hostDev + "\n");
    assertThat(hostAsk("ADVISE v1 ranks=4")).as("the host's own client is answered about the host's /dev/shm")
        .contains("SHMGUARD_DEV=" + hostDev + "\n", "SHMGUARD_MOUNT=/dev/shm\n");

    assertThat(Cmd.run("df", "-B1", "--output=size", "/dev/shm")).as("the host's /dev/shm keeps its size").isEqualTo(hostSize);
    assertThat(log()).contains("advice socket: refused \"REMOUNT v1 dev=" + hostDev + " size=" + 128 * MIB + "\" from uid 0 (pid ")
        .contains("it is root in another mount namespace");
    assertThat(hostAsk("CLEAN v1 dry-run=true")).as("the host's root is served").startsWith("OK v1\n");
    assertThat(log()).doesNotContain("remount_grown").doesNotContain("grew ");
  }

  private String inside(String request) {
    return inside(List.of("python3", "-I", "-S", "-c", ASK, "/run/shmguard/advice.sock", request));
  }

  private String inside(List<String> command) {
    Cmd.Result r = podman.exec(name, List.of(), command.toArray(String[]::new));
    assertThat(r.status()).as(r.err()).isZero();
    return r.out();
  }

  private String hostAsk(String request) {
    Cmd.Result r = Cmd.exec("/usr/bin/python3", "-I", "-S", "-c", ASK, sockDir.resolve("advice.sock").toString(), request);
    return r.status() == 0 ? r.out() : "failed: " + r.err();
  }

  private String log() {
    try {
      return Files.readString(work.resolve("daemon.log"));
    } catch (IOException e) {
      return e.toString();
    }
  }

  private static void deleteTree(Path p) throws IOException {
    if (p != null && Files.exists(p)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
  }
}
