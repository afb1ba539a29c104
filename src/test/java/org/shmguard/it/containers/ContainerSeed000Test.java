package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Podman;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.Seed000Job;
import org.shmguard.testing.TestConfig;

/**
 * SCENARIOS.md #1 (seed 000) as a real runtime makes it: a podman container (runc, as root) on the
 * cached Debian root with python3, started with {@code --shm-size=64m} and the four GPUs a 4-rank
 * job gets from the NVIDIA container toolkit (here /dev/null under the names /dev/nvidia0..3, as
 * no GPU is on the build machine, and NVIDIA_VISIBLE_DEVICES=0,1,2,3). The daemon runs on the host
 * (the test sandbox); its socket directory is bind-mounted read-only into the container, as
 * advice-clients.md tells users to. Inside, the job runs four ranks' worth of NCCL 2.21.5's SHM
 * transport (src/test/resources/seed000/nccl_ranks.py): 73.6 MiB of segments that 64 MiB cannot hold.
 */
class ContainerSeed000Test {
  private static final Path ROOT = org.shmguard.testing.PythonRoot.PATH;
  private static final Path JRE_ROOT = org.shmguard.testing.JreRoot.PATH;
  private static final long MIB = 1L << 20;
  /** remount.targetSize; remount.maxSize is 192M. */
  private static final long CAP = 160 * MIB;

  /** systemd/shmguard.service's CapabilityBoundingSet. */
  private static final String UNIT_CAPS = "+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";
  private static final String HOST_MOUNTED = "--shm-size=64m";
  private static final String IN_CONTAINER_ONLY = "--ipc=none --mount type=tmpfs,destination=/dev/shm,tmpfs-size=64m,tmpfs-mode=1777";

  private Path work;
  private Path config;
  private Process daemon;
  private Journald journald;
  private Podman podman;
  private String name;

  @BeforeEach
  void setUp() throws Exception {
    Sandbox.require();
    org.shmguard.testing.PythonRoot.prepare();
    work = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "seed000-");
    name = "seed000-" + work.getFileName().toString().substring("seed000-".length());
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
        if (journald != null) {
          journald.close();
        }
        deleteTree(work);
      }
    }
  }

  /**
   * Both ways a container gets its own 64 MB /dev/shm: {@code --shm-size=64m}, where podman (as
   * Docker) mounts the tmpfs on the host under its storage (.../userdata/shm) and binds it in; and
   * a tmpfs mount of the container's spec ({@code --ipc=none --mount type=tmpfs,...}), which runc
   * mounts in the container's mount namespace only, where shmguard reaches it through
   * /proc/PID/root/dev/shm.
   */
  @ParameterizedTest
  @ValueSource(strings = {HOST_MOUNTED, IN_CONTAINER_ONLY})
  void theDoctorNamesTheShortfallTheSocketAnswersForTheContainersOwn64MbAndRemountGrowsItUpToTheCap(String shm)
      throws Exception {
    start(true, shm);
    String shmDev = job(null).shmDev();
    String hostDev = Cmd.run("mountpoint", "-d", "/dev/shm").strip();
    assertThat(shmDev).as("the container's /dev/shm is a tmpfs of its own").isNotEqualTo(hostDev);
    String label = "podman:" + inside("cat", "/etc/hostname").strip();
    assertThat(inside("df", "-B1", "--output=size", "/dev/shm")).contains(Long.toString(64 * MIB));

    // 1. The doctor, run on the host as root (where shmguard is installed; the job image has no JRE).
    CliRun doctor = CliRun.of("doctor", "--nccl-version", "2.21.5", "-c", config.toString());
    System.out.println("shmguard doctor on the host:\n" + doctor.out());
    assertThat(doctor.status()).as(doctor.out() + doctor.err()).isEqualTo(1);
    assertThat(doctor.out()).contains(label + ":/dev/shm is 64.0M; 4 NCCL ranks need at least 73.6M for the SHM"
        + " transport alone").contains("the container sees 4 GPU(s): /dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3")
        .contains("podman run --shm-size=1g").doesNotContain("[daemon-not-running]")
        .contains(label + ":/dev/shm: NCCL_SHM_DISABLE=1  (4 local ranks of NCCL 2.21.5 need 83.2 MiB in /dev/shm");
    assertThat(doctor.out()).containsPattern(shm.equals(HOST_MOUNTED)
        ? "for the running container, until it restarts: mount -o remount,size=1G /\\S+/overlay-containers/\\w+/userdata/shm\n"
        : "for the running container, until it restarts: nsenter -t [0-9]+ -m mount -o remount,size=1G /dev/shm\n");

    // 2. The advice socket, asked from inside by an ordinary user, answers for the container's own mount.
    Seed000Job job = job(label);
    job.adviceInsideIsForItsOwn64Mb(shmDev);
    // 3. The job's first start fails for room; the daemon grows the container's tmpfs to the cap
    // (through /proc/PID/root/dev/shm where only the container's namespace has it); the second start runs.
    job.firstStartFailsAndTheDaemonGrowsItsShm(CAP, "nosuid", "nodev");
  }

  @Test
  void withRemountOffTheContainersShmStaysAt64MbAndTheJournalSaysWhy() throws Exception {
    start(false, HOST_MOUNTED);
    String label = "podman:" + inside("cat", "/etc/hostname").strip();

    job(label).withRemountOffItStaysAt64MbAndTheJournalSaysWhy();
  }

  /**
   * The doctor as a user inside the container would run it, where the image has a JRE and
   * shmguard's classes (the cached Debian root with default-jre-headless; the build's class path
   * bound in read-only at the same paths): it sees no GPU driver here and is told the job's 4 ranks.
   */
  @Test
  void theDoctorRunInsideTheContainerTellsItToBeRecreatedWithALargerShmSize() throws Exception {
    org.shmguard.testing.JreRoot.prepare();
    podman = Podman.onRoot(JRE_ROOT);
    List<String> options = new ArrayList<>(List.of("--name", name, "--shm-size=64m"));
    for (String dir : List.of(System.getProperty("user.dir") + "/target", System.getProperty("user.home") + "/.m2")) {
      options.addAll(List.of("-v", dir + ":" + dir + ":ro"));
    }
    podman.run(options, "sleep", "600");
    Eventually.until("the container running", Duration.ofSeconds(60), () -> podman.exec(name, List.of(), "true").status() == 0);

    Cmd.Result doctor = job(null).run("java", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "doctor", "--ranks", "4", "--nccl-version", "2.21.5");
    System.out.println("shmguard doctor in the container:\n" + doctor.out());

    assertThat(doctor.status()).as(doctor.out() + doctor.err()).isEqualTo(1);
    assertThat(doctor.out()).contains("[shm-too-small] /dev/shm is 64.0M; 4 NCCL ranks need at least 73.6M for the SHM"
        + " transport alone").contains("fix: this /dev/shm is this podman container's own: recreate the container with more"
        + " shared memory: podman run --shm-size=1g ...").doesNotContain("/etc/fstab").doesNotContain("remount,size=");
  }

  /** Journald, the daemon on the host, and the container with the daemon's socket directory bound in read-only. */
  private void start(boolean remount, String shm) throws Exception {
    Path sockDir = dir("run-shmguard", "rwxr-xr-x");
    Path bin = dir("bin", "rwxr-xr-x");
    copy(Path.of("packaging/bin/shmguard-launch"), bin.resolve("shmguard-launch"));
    copy(Path.of("packaging/share/shmguard_client.py"), bin.resolve("shmguard_client.py"));
    try (InputStream in = ContainerSeed000Test.class.getResourceAsStream("/seed000/nccl_ranks.py")) {
      Files.write(bin.resolve("nccl_ranks.py"), in.readAllBytes());
    }
    Files.setPosixFilePermissions(bin.resolve("nccl_ranks.py"), PosixFilePermissions.fromString("rwxr-xr-x"));
    config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"
        + "advice:\n  socket: " + sockDir.resolve("advice.sock") + "\n  envFile: " + work.resolve("advice.env") + "\n"
        + "remount:\n  enabled: " + remount + "\n  targetSize: 160M\n  maxSize: 192M\n  cooldown: 1h\n");
    journald = Journald.start();
    // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
    daemon = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
        "--bounding-set", "-all," + UNIT_CAPS, Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(work.resolve("daemon.log").toFile()).start();
    Eventually.until(() -> "the daemon's socket; its log: " + log(), Duration.ofSeconds(60),
        () -> Files.exists(sockDir.resolve("advice.sock")));
    assertThat(Files.readString(Path.of("/proc", Long.toString(daemon.pid()), "status"))).as("the unit's bounding set")
        .contains("CapBnd:\t000000001028000e").contains("CapEff:\t000000001028000e");

    podman = Podman.onRoot(ROOT);
    List<String> options = new ArrayList<>(List.of("--name", name, "-e", "NVIDIA_VISIBLE_DEVICES=0,1,2,3",
        "-v", sockDir + ":/run/shmguard:ro", "-v", bin + ":/usr/local/bin:ro"));
    options.addAll(List.of(shm.split(" ")));
    for (int gpu = 0; gpu < 4; gpu++) {
      options.addAll(List.of("--device", "/dev/null:/dev/nvidia" + gpu));
    }
    podman.run(options, "sleep", "600");
    Eventually.until("the container running", Duration.ofSeconds(60),
        () -> podman.exec(name, List.of(), "true").status() == 0);
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
    return new Seed000Job("podman", label, (options, command) -> podman.exec(name, options, command));
  }

  private String inside(String... command) {
    return job(null).inside(command);
  }

  private Path dir(String d, String mode) throws IOException {
    Path p = Files.createDirectories(work.resolve(d));
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
    return p;
  }

  private static void copy(Path from, Path to) throws IOException {
    Files.copy(from.toAbsolutePath(), to);
    Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
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
