package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
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
    String shmDev = inside("python3", "-I", "-S", "-c",
        "import os; d = os.stat('/dev/shm').st_dev; print('%d:%d' % (os.major(d), os.minor(d)))").strip();
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
    inside("fallocate", "-l", "8M", "/dev/shm/model-weights");
    List<String> advice = new ArrayList<>();
    Eventually.until("the daemon's answer with the 8 MiB file counted", Duration.ofSeconds(30), () -> {
      advice.clear();
      advice.addAll(asUser("python3", "-I", "-S", "/usr/local/bin/shmguard_client.py", "advise", "--local-ranks", "4",
          "--nccl-version", "2.21.5").out().lines().toList());
      return advice.contains("SHMGUARD_FREE_BYTES=" + 56 * MIB);
    });
    System.out.println("shmguard_client.py advise in the container:\n" + String.join("\n", advice));
    assertThat(advice).contains("NCCL_SHM_DISABLE=1", "SHMGUARD_ADVICE=shm-disable", "SHMGUARD_MOUNT=" + label + ":/dev/shm",
        "SHMGUARD_DEV=" + shmDev, "SHMGUARD_SIZE_BYTES=" + 64 * MIB, "SHMGUARD_LOCAL_RANKS=4");
    Cmd.Result launch = asUser("shmguard-launch", "--local-ranks", "4", "--nccl-version", "2.21.5", "--", "sh", "-c",
        "echo NCCL_SHM_DISABLE=$NCCL_SHM_DISABLE");
    assertThat(launch.status()).as(launch.err()).isZero();
    assertThat(launch.out()).isEqualTo("NCCL_SHM_DISABLE=1\n");
    assertThat(launch.err()).isEqualTo("shmguard-launch: set NCCL_SHM_DISABLE=1 [advice: shm-disable]: needs 28.0 MiB of "
        + label + ":/dev/shm, 56.0 MiB free (--verbose: why)\n");

    // Without the 8 MiB file, the first start fails at 86% used (6 of its 8 receive segments fit), below
    // capacity.critical: only the failed allocation tells the daemon the job needed more. (With it, the
    // job's own segments pass 95% before the 7th fails, and the daemon may grow the mount in time.)
    inside("rm", "/dev/shm/model-weights");
    String optionsBefore = inside("findmnt", "-n", "-o", "OPTIONS", "/dev/shm");
    assertThat(optionsBefore).contains("nosuid", "nodev", "size=65536k");
    // 3. The job's first start fails for room; the daemon grows the container's tmpfs to the cap; the second start runs.
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
    System.out.printf("remount_grown %d ms after podman exec returned the job's failure%n",
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
    start(false, HOST_MOUNTED);
    String label = "podman:" + inside("cat", "/etc/hostname").strip();

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

    Cmd.Result doctor = inside2("java", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
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

  /** What {@code command} prints in the container, as its root; it must succeed. */
  private String inside(String... command) {
    Cmd.Result r = inside2(command);
    if (r.status() != 0) {
      throw new AssertionError("in the container: " + String.join(" ", command) + " failed (" + r.status() + "): " + r.err());
    }
    return r.out();
  }

  private Cmd.Result inside2(String... command) {
    return podman.exec(name, List.of(), command);
  }

  /** {@code command} in the container as uid 65534, an ordinary user. */
  private Cmd.Result asUser(String... command) {
    return podman.exec(name, List.of("--user", "65534:65534"), command);
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
