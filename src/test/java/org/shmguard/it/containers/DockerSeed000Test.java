package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import org.shmguard.testing.Seed000Job;
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
    String shmDev = job(null).shmDev();
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
    Seed000Job job = job(label);
    job.adviceInsideIsForItsOwn64Mb(shmDev);
    // 3. The job's first start fails for room; the daemon grows the container's tmpfs to the cap
    // (through /proc/PID/root/dev/shm where only the container's namespace has it); the second start runs.
    job.firstStartFailsAndTheDaemonGrowsItsShm(CAP, "nosuid", "nodev", "noexec");
  }

  @Test
  void withRemountOffTheContainersShmStaysAt64MbAndTheJournalSaysWhy() throws Exception {
    start(false);
    String label = "docker:" + id.substring(0, 12);

    job(label).withRemountOffItStaysAt64MbAndTheJournalSaysWhy();
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

  /** The container as seed 000's checks use it ({@code label}: its label in shmguard's output; null before it is known). */
  private Seed000Job job(String label) {
    return new Seed000Job("docker", label, (options, command) -> exec(options, command));
  }

  private String inside(String... command) {
    return job(null).inside(command);
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
