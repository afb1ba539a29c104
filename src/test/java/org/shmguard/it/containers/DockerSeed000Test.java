package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Docker;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * SCENARIOS.md #1 (seed 000) as Docker 20.10 makes it ({@link Docker}), with the advice client
 * inside: a container of the cached Debian root with python3 ({@link Docker#pythonImage()}),
 * started with {@code --shm-size=64m} (20.10's default IPC mode, private: a tmpfs in the
 * container's mount namespace only) and the four GPUs a 4-rank job gets (/dev/null under the names
 * /dev/nvidia0..3, and NVIDIA_VISIBLE_DEVICES=0,1,2,3). The daemon runs on the host (the test
 * sandbox) as the unit runs it; its socket directory is bound read-only into the container at
 * /run/shmguard, as advice-clients.md tells users to. Inside, the job runs four ranks' worth of NCCL
 * 2.21.5's SHM transport (src/test/resources/seed000/nccl_ranks.py): 73.6 MiB that 64 MiB cannot
 * hold. The podman twin is {@link ContainerSeed000Test}. One dockerd, and one import, serve the class.
 */
class DockerSeed000Test {
  private static final long MIB = 1L << 20;
  /** remount.targetSize; remount.maxSize is 192M. */
  private static final long CAP = 160 * MIB;

  private static Docker docker;
  private static String image;

  private Path work;
  private Path config;
  private Process daemon;
  private Journald journald;
  private String id;

  @BeforeAll
  static void startDocker() throws Exception {
    Sandbox.require();
    assumeTrue(Docker.installed(), "needs docker.io (dockerd 20.10, /usr/sbin/dockerd)");
    org.shmguard.testing.PythonRoot.prepare();
    docker = Docker.start();
    image = docker.pythonImage();
  }

  @AfterAll
  static void stopDocker() {
    if (docker != null) {
      docker.close();
    }
  }

  @BeforeEach
  void setUp() throws IOException {
    work = Files.createTempDirectory(docker.dir(), "seed000-");
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (id != null) {
        docker.client("rm", "-f", id);
      }
    } finally {
      try {
        if (daemon != null) {
          daemon.destroy();
          assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
        }
      } finally {
        if (journald != null) {
          journald.close();
        }
      }
    }
  }

  @Test
  void theSocketAnswersInsideForTheContainersOwn64MbAndRemountGrowsItUpToTheCap() throws Exception {
    start(true);
    String shmDev = inside("python3", "-I", "-S", "-c",
        "import os; d = os.stat('/dev/shm').st_dev; print('%d:%d' % (os.major(d), os.minor(d)))").strip();
    String hostDev = Cmd.run("mountpoint", "-d", "/dev/shm").strip();
    assertThat(shmDev).as("the container's /dev/shm is a tmpfs of its own").isNotEqualTo(hostDev);
    String label = "docker:" + id.substring(0, 12);
    assertThat(inside("df", "-B1", "--output=size", "/dev/shm")).contains(Long.toString(64 * MIB));

    // 1. The doctor on the host, with the daemon running: the shortfall, and the daemon's advice for the container.
    CliRun doctor = CliRun.of("doctor", "--nccl-version", "2.21.5", "-c", config.toString());
    System.out.println("shmguard doctor on the host:\n" + doctor.out());
    assertThat(doctor.status()).as(doctor.out() + doctor.err()).isEqualTo(1);
    assertThat(doctor.out()).contains(label + ":/dev/shm is 64.0M; 4 NCCL ranks need at least 73.6M for the SHM"
        + " transport alone").contains("the container sees 4 GPU(s): /dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3")
        .contains("docker run --shm-size=1g").doesNotContain("[daemon-not-running]")
        .contains(label + ":/dev/shm: NCCL_SHM_DISABLE=1  (4 local ranks of NCCL 2.21.5 need 83.2 MiB in /dev/shm")
        .contains("for the running container, until it restarts: nsenter -t " + docker.pid(id)
            + " -m mount -o remount,size=1G /dev/shm\n");

    // 2. The advice socket, asked from inside by an ordinary user, answers for the container's own mount.
    inside("fallocate", "-l", "8M", "/dev/shm/model-weights");
    List<String> advice = new ArrayList<>();
    long asked = System.nanoTime();
    Eventually.until("the daemon's answer with the 8 MiB file counted", Duration.ofSeconds(30), () -> {
      advice.clear();
      advice.addAll(asUser("python3", "-I", "-S", "/usr/local/bin/shmguard_client.py", "advise", "--local-ranks", "4",
          "--nccl-version", "2.21.5").out().lines().toList());
      return advice.contains("SHMGUARD_FREE_BYTES=" + 56 * MIB);
    });
    System.out.printf("shmguard_client.py advise in the Docker container (%d ms until it counted the file):%n%s%n",
        (System.nanoTime() - asked) / 1_000_000, String.join("\n", advice));
    assertThat(advice).contains("NCCL_SHM_DISABLE=1", "SHMGUARD_ADVICE=shm-disable", "SHMGUARD_MOUNT=" + label + ":/dev/shm",
        "SHMGUARD_DEV=" + shmDev, "SHMGUARD_SIZE_BYTES=" + 64 * MIB, "SHMGUARD_LOCAL_RANKS=4");
    Cmd.Result launch = asUser("shmguard-launch", "--local-ranks", "4", "--nccl-version", "2.21.5", "--", "sh", "-c",
        "echo NCCL_SHM_DISABLE=$NCCL_SHM_DISABLE");
    assertThat(launch.status()).as(launch.err()).isZero();
    assertThat(launch.out()).isEqualTo("NCCL_SHM_DISABLE=1\n");
    assertThat(launch.err()).isEqualTo("shmguard-launch: set NCCL_SHM_DISABLE=1 [advice: shm-disable]: needs 28.0 MiB of "
        + label + ":/dev/shm, 56.0 MiB free (--verbose: why)\n");

    // 3. The job's first start fails for room (86% used: only the failed allocation tells the daemon); the daemon
    // grows the container's tmpfs to the cap, through /proc/PID/root/dev/shm; the second start runs.
    inside("rm", "/dev/shm/model-weights");
    String optionsBefore = inside("findmnt", "-n", "-o", "OPTIONS", "/dev/shm");
    assertThat(optionsBefore).contains("nosuid", "nodev", "noexec", "size=65536k");
    Cmd.Result first = inside2("python3", "/usr/local/bin/nccl_ranks.py");
    long failedAt = System.currentTimeMillis();
    assertThat(first.status()).as(first.out() + first.err()).isEqualTo(1);
    assertThat(first.out()).contains("failed to extend /dev/shm/nccl-").contains("No space left on device");
    Eventually.until("the container's /dev/shm grown to 160 MiB", Duration.ofSeconds(60),
        () -> inside("df", "-B1", "--output=size", "/dev/shm").contains(Long.toString(CAP)));
    System.out.println("the job's first start:\n" + first.out() + "df /dev/shm in the container after the remount:\n"
        + inside("df", "-h", "/dev/shm"));
    Cmd.Result second = inside2("python3", "/usr/local/bin/nccl_ranks.py");
    assertThat(second.status()).as(second.out() + second.err()).isZero();
    assertThat(second.out()).contains("job ran: 4 ranks made their NCCL segments");

    List<JsonNode> grown = Journald.entries("SHMGUARD_EVENT", "remount_grown");
    assertThat(grown).hasSize(1);
    JsonNode e = grown.get(0);
    System.out.printf("remount_grown %d ms after docker exec returned the job's failure%n",
        e.get("__REALTIME_TIMESTAMP").asLong() / 1000 - failedAt);
    assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(label + ":/dev/shm");
    assertThat(e.get("SHM_SIZE_BEFORE").asText()).isEqualTo(Long.toString(64 * MIB));
    assertThat(e.get("SHM_SIZE_AFTER").asText()).isEqualTo(Long.toString(CAP));
    assertThat(inside("findmnt", "-n", "-o", "OPTIONS", "/dev/shm")).as("only the size changed")
        .isEqualTo(optionsBefore.replace("size=65536k", "size=163840k"));
    assertThat(Cmd.run("mountpoint", "-d", "/dev/shm").strip()).isEqualTo(hostDev);
    assertThat(Cmd.run("df", "-B1", "--output=size", "/dev/shm")).as("the host's /dev/shm keeps its size")
        .contains(Long.toString(64 * MIB));
  }

  @Test
  void withRemountOffTheContainersShmStaysAt64MbAndTheJournalSaysWhy() throws Exception {
    start(false);
    String label = "docker:" + id.substring(0, 12);

    Cmd.Result first = inside2("python3", "/usr/local/bin/nccl_ranks.py");
    assertThat(first.status()).as(first.out() + first.err()).isEqualTo(1);
    Eventually.until("an allocation_failed entry for the container", Duration.ofSeconds(60),
        () -> Journald.entries("SHMGUARD_EVENT", "allocation_failed").stream()
            .anyMatch(n -> n.path("SHM_MOUNT").asText().equals(label + ":/dev/shm")));

    JsonNode failed = Journald.entries("SHMGUARD_EVENT", "allocation_failed").get(0);
    assertThat(failed.get("MESSAGE").asText()).endsWith("; not grown: remounting is off (remount.enabled: false)");
    assertThat(failed.get("SHM_REMOUNT").asText()).isEqualTo("remounting is off (remount.enabled: false)");
    assertThat(Journald.entries("SHMGUARD_EVENT", "remount_grown")).isEmpty();
    assertThat(inside("df", "-B1", "--output=size", "/dev/shm")).contains(Long.toString(64 * MIB));
  }

  /** Journald, the daemon on the host as the unit runs it, and the container with the socket directory bound in read-only. */
  private void start(boolean remount) throws Exception {
    Path sockDir = dir("run-shmguard");
    Path bin = dir("bin");
    copy(Path.of("packaging/bin/shmguard-launch"), bin.resolve("shmguard-launch"));
    copy(Path.of("packaging/share/shmguard_client.py"), bin.resolve("shmguard_client.py"));
    try (InputStream in = DockerSeed000Test.class.getResourceAsStream("/seed000/nccl_ranks.py")) {
      Files.write(bin.resolve("nccl_ranks.py"), in.readAllBytes());
    }
    Files.setPosixFilePermissions(bin.resolve("nccl_ranks.py"), PosixFilePermissions.fromString("rwxr-xr-x"));
    config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"
        + "advice:\n  socket: " + sockDir.resolve("advice.sock") + "\n  envFile: " + work.resolve("advice.env") + "\n"
        + "remount:\n  enabled: " + remount + "\n  targetSize: 160M\n  maxSize: 192M\n  cooldown: 1h\n"
        + "runtimes:\n  kubeletRoot: \"\"\n  dockerRoot: " + docker.dataRoot() + "\n  containerStorage: []\n");
    journald = Journald.start();
    // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
    daemon = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
        "--bounding-set", CliRun.UNIT_CAPS, Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(work.resolve("daemon.log").toFile()).start();
    Eventually.until(() -> "the daemon's socket; its log: " + log(), Duration.ofSeconds(60),
        () -> Files.exists(sockDir.resolve("advice.sock")));

    List<String> options = new ArrayList<>(List.of("--shm-size=64m", "-e", "NVIDIA_VISIBLE_DEVICES=0,1,2,3",
        "-v", sockDir + ":/run/shmguard:ro", "-v", bin + ":/usr/local/bin:ro"));
    for (int gpu = 0; gpu < 4; gpu++) {
      options.addAll(List.of("--device", "/dev/null:/dev/nvidia" + gpu));
    }
    long t0 = System.nanoTime();
    id = docker.runDetached(image, options, "sleep", "600");
    System.out.printf("docker run of %s: %d ms; the set-up's directory: %s", image, (System.nanoTime() - t0) / 1_000_000,
        Cmd.run("df", "-h", docker.dir().toString()));
  }

  private String log() {
    try {
      return Files.readString(work.resolve("daemon.log"));
    } catch (IOException e) {
      return e.toString();
    }
  }

  /** What {@code command} prints in the container, as its root; it must succeed. */
  private String inside(String... command) {
    Cmd.Result r = inside2(command);
    if (r.status() != 0) {
      throw new AssertionError("in the container: " + String.join(" ", command) + " failed (" + r.status() + "): " + r.err());
    }
    return r.out();
  }

  private Cmd.Result inside2(String... command) {
    return exec(List.of(), command);
  }

  /** {@code command} in the container as uid 65534, an ordinary user. */
  private Cmd.Result asUser(String... command) {
    return exec(List.of("--user", "65534:65534"), command);
  }

  private Cmd.Result exec(List<String> options, String... command) {
    List<String> args = new ArrayList<>(List.of("exec"));
    args.addAll(options);
    args.add(id);
    args.addAll(List.of(command));
    return docker.client(args.toArray(String[]::new));
  }

  private Path dir(String d) throws IOException {
    Path p = Files.createDirectories(work.resolve(d));
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    return p;
  }

  private static void copy(Path from, Path to) throws IOException {
    Files.copy(from.toAbsolutePath(), to);
    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
  }
}
