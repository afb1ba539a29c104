package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.shmguard.advice.AdviceClient;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.SlurmNode;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The shipped Slurm epilog (packaging/slurm/epilog) and NHC check (packaging/slurm/shmguard.nhc)
 * on a real one-node Slurm from Debian's packages, started in the test sandbox: jobs run by
 * sbatch as an ordinary user, the epilog run by slurmd as root at each job's end, the node's
 * state read back with scontrol.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SlurmTest {
  private static final Path EPILOG = Path.of("packaging/slurm/epilog").toAbsolutePath();
  private static final Path NHC_CHECK = Path.of("packaging/slurm/shmguard.nhc").toAbsolutePath();
  /** The epilog's default: slurmd gives an epilog none of its own environment, so nothing else reaches it. */
  private static final Path SOCKET = Path.of("/run/shmguard/advice.sock");

  private static SlurmNode slurm;
  private static TmpfsMount shm;
  private static Path epilogLog;

  @BeforeAll
  static void startSlurm() throws IOException {
    Sandbox.require();
    SlurmNode.requireInstalled();
    shm = TmpfsMount.create("size=4m,mode=1777,nosuid,nodev");
    Path harness = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "epilog-");
    epilogLog = harness.resolve("epilog.log");
    // Slurm discards an epilog's output; this wrapper only keeps it for the assertions.
    Path wrapper = executable(harness.resolve("epilog"), "#!/bin/sh\nexec " + EPILOG + " 2>>" + epilogLog + "\n");
    slurm = SlurmNode.start(Map.of("Epilog", wrapper.toString()));
  }

  @AfterAll
  static void stopSlurm() {
    if (slurm != null) {
      // the sandbox is a PID namespace of its own: every process listed here is one the tests started
      assertThat(slurmProcesses()).as("Slurm's and munge's processes, while they run").hasSizeGreaterThanOrEqualTo(3);
      slurm.close();
      assertThat(slurmProcesses()).as("Slurm's and munge's processes, once ended").isEmpty();
    }
    if (shm != null) {
      shm.close();
    }
  }

  @Test
  @Order(1)
  void theEpilogHasTheDaemonReapAJobsLeakBeforeTheNextJobStarts() throws Exception {
    Path segment = shm.file("nccl-slurm1");
    // Nothing but a request makes this daemon pass: no holder exit watches, a sweep every 10 minutes,
    // and the job's last close is read-only (no IN_CLOSE_WRITE). The grace is an hour.
    Process daemon = startDaemon("reap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 10m\n  watchHolders: 0\n");
    try {
      Path held = slurm.jobs().resolve("held");
      Path release = slurm.jobs().resolve("release");
      Path leaker = script("leaker.sh", "#!/bin/sh\n"
          + "# an NCCL rank that dies without unlinking its segment\n"
          + "head -c 1048576 /dev/zero > " + segment + "\n"
          + "exec 3< " + segment + "\n"
          + "touch " + held + "\n"
          + "i=0; while [ ! -e " + release + " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\n"
          + "echo \"job $SLURM_JOB_ID leaves " + segment + "\"\n");
      String leakJob = slurm.submit(leaker, "--uid=65534", "--gid=65534");
      Eventually.until(() -> "job " + leakJob + " to hold its segment\n" + slurm.logs(), Duration.ofSeconds(90),
          () -> Files.exists(held));
      // A pass while the job runs: the daemon has seen the segment's holder, as its sweeps would over a real job.
      assertThat(AdviceClient.ask(SOCKET, "CLEAN v1", Duration.ofSeconds(60))).startsWith("reaped 0 of 0 candidates");
      Files.createFile(release);
      slurm.awaitEnd(leakJob);

      Path lister = script("lister.sh", "#!/bin/sh\nif [ -e " + segment + " ]; then echo still there; else echo gone; fi\n");
      String next = slurm.sbatchAndWait(lister, "--uid=65534", "--gid=65534");

      assertThat(slurm.output(leakJob)).contains("leaves " + segment);
      assertThat(slurm.output(next)).isEqualTo("gone\n");
      assertThat(segment).doesNotExist();
      assertThat(Files.readString(epilogLog)).contains("shmguard-epilog: job " + leakJob + ": clean pass done: reaped 1 of 1 candidate;");
      awaitIdle();
    } catch (Throwable t) {
      // the first failure is the one to read: a failing stop is added to it, never put in its place
      try {
        stop(daemon);
      } catch (Throwable s) {
        t.addSuppressed(s);
      }
      throw t;
    }
    stop(daemon);
  }

  @Test
  @Order(2)
  void withoutADaemonTheEpilogSaysSoAndTheNodeStaysInService() throws Exception {
    Path job = script("noop.sh", "#!/bin/sh\necho ran\n");
    String id = slurm.sbatchAndWait(job, "--uid=65534", "--gid=65534");
    Eventually.until("the epilog of job " + id + " to finish", Duration.ofSeconds(60), () -> logHas("job " + id + ":"));

    assertThat(Files.readString(epilogLog)).contains("shmguard-epilog: job " + id + ": no shmguard daemon socket at " + SOCKET);
    awaitIdle();
    assertThat(slurm.reason()).isEmpty();
  }

  @Test
  @Order(3)
  void nhcDrainsTheNodeWhenItsShmIsPastCriticalAndPassesItWhenHealthy() throws Exception {
    Path nhc = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "nhc-");
    Path scripts = Files.createDirectory(nhc.resolve("scripts"));
    Files.copy(NHC_CHECK, scripts.resolve("shmguard.nhc"));
    Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n");
    Path nhcConf = Files.writeString(nhc.resolve("nhc.conf"), "# shmguard\n * || check_shmguard -c " + config + "\n");
    Path bin = Files.createDirectory(nhc.resolve("bin"));
    NhcCheckTest.shmguardOnPath(bin);

    Cmd.Result healthy = runNhc(nhcConf, scripts, bin);
    assertThat(healthy.status()).as(healthy.err()).isZero();
    awaitIdle();

    // 96% of a 4 MiB tmpfs, held by no segment shmguard may reap: past critical (95%), and no remount is configured.
    Files.write(shm.file("model-cache"), new byte[4_050_000]);
    try {
      Cmd.Result sick = runNhc(nhcConf, scripts, bin);

      assertThat(sick.status()).as(sick.out() + sick.err()).isEqualTo(1);
      assertThat(slurm.state()).isEqualTo("IDLE+DRAIN");
      assertThat(slurm.reason()).startsWith("NHC: check_shmguard:  " + shm.path() + " 9").contains("% full (critical 95%)");
    } finally {
      Files.delete(shm.file("model-cache"));
      slurm.client("scontrol", "update", "NodeName=" + slurm.node(), "State=RESUME");
    }
  }

  private static java.util.List<String> slurmProcesses() {
    return ProcessHandle.allProcesses().map(h -> h.info().command().orElse(""))
        .filter(c -> c.matches(".*/(slurmctld|slurmd|slurmstepd|munged)(-wlm)?")).toList();
  }

  /** Idle once the last job's epilog has finished; an epilog that failed would have drained it instead. */
  private static void awaitIdle() {
    Eventually.until(() -> "the node to be idle: " + slurm.state() + " " + slurm.reason(), Duration.ofSeconds(60),
        () -> slurm.state().equals("IDLE"));
  }

  private Cmd.Result runNhc(Path conf, Path scripts, Path bin) {
    return Cmd.exec("env", "PATH=" + bin + ":/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_CONF=" + slurm.conf(),
        "HOSTNAME=" + slurm.node(), "NHC_CONF=" + conf, "NHC_SCRIPTS=" + scripts, "TIMEOUT=60",
        "bash", Path.of("src/test/resources/slurm/nhc-driver").toAbsolutePath().toString());
  }

  private boolean logHas(String text) {
    try {
      return Files.readString(epilogLog).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  private static Process startDaemon(String yaml) throws IOException {
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "daemon-");
    Path config = TestConfig.write("mounts: [" + shm.path() + "]\n" + yaml + "advice:\n  socket: " + SOCKET
        + "\n  envFile: " + dir.resolve("advice.env") + "\n");
    Process p = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        "org.shmguard.cli.Main", "daemon", "-c", config.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("daemon.log").toFile()).start();
    Eventually.until("the daemon to answer on " + SOCKET, Duration.ofSeconds(60), () -> {
      try {
        return AdviceClient.ask(SOCKET, "PING", Duration.ofSeconds(5)).equals("pong\n");
      } catch (Exception e) {
        return false;
      }
    });
    return p;
  }

  /** SIGTERM: the daemon exits 0 and takes its socket with it. */
  private static void stop(Process daemon) throws InterruptedException {
    daemon.destroy();
    assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(daemon.exitValue()).as("the daemon's exit status on SIGTERM").isZero();
    assertThat(SOCKET).doesNotExist();
  }

  private static Path script(String name, String text) throws IOException {
    return executable(slurm.jobs().resolve(name), text);
  }

  static Path executable(Path file, String text) throws IOException {
    Files.writeString(file, text);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }
}
