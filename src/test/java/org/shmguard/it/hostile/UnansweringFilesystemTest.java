package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.AdviceClient;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.FuseFixture;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * `shmguard daemon` (in its own JVM) and `clean` while FUSE filesystems
 * (src/test/resources/fuse/fusefix.c) misbehave: an ordinary user's mount, made through
 * fusermount3, that denies root, with that user's process holding its file; and a root-mounted
 * one standing in for NFS, with a process holding its file and a "container" whose root directory
 * it serves, that stops answering. Leaks on the mounts that answer are still reaped, the daemon
 * answers its socket, and it stops at once on SIGTERM with status 0.
 */
class UnansweringFilesystemTest {
  private static final Duration PATIENCE = FuseFixture.PATIENCE;
  /** Far above the few hundred milliseconds a stop takes, far below the unit's TimeoutStopSec. */
  private static final Duration STOP_BOUND = Duration.ofSeconds(20);

  @Test
  void aStalledFilesystemStopsNeitherReapingElsewhereNorTheSocketNorSigterm() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "stalls-");
    Path socket = dir.resolve("advice.sock");
    Path log = dir.resolve("daemon.log");
    try (FuseFixture denying = FuseFixture.ofNobody(); FuseFixture nfs = FuseFixture.ofRoot();
        TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      denying.holdFile(true);
      assertThatThrownBy(() -> Files.readAttributes(denying.file(), "unix:ino")).as("root may not stat the user's FUSE file")
          .isInstanceOf(AccessDeniedException.class);
      nfs.holdFile(false);
      Process container = nfs.containerRootedHere();
      String containerShm = "/proc/" + container.pid() + "/root/dev/shm";
      String containerDev = Cmd.run("stat", "-c", "%Hd:%Ld", containerShm).strip();
      Path config = TestConfig.write("mounts: [auto, " + shm.path() + "]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n"
          + "daemon:\n  interval: 1s\n  rediscover: 500ms\nadvice:\n  socket: " + socket + "\n  envFile: "
          + dir.resolve("advice.env") + "\n");
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
          System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        Eventually.until(() -> "the container's /dev/shm (" + containerDev + ") watched; log:\n" + read(log), PATIENCE,
            () -> read(log).contains("device " + containerDev + ")"));
        Path before = shm.createSegment("nccl-BeforeStall1", 4_100);
        Eventually.until(() -> "nccl-BeforeStall1 reaped; log:\n" + read(log), PATIENCE, () -> !Files.exists(before));

        nfs.stall();
        Eventually.until(() -> "the stalled walk reported; log:\n" + read(log), PATIENCE,
            () -> read(log).contains("SHMGUARD_EVENT=mount_stalled SHM_PATH=" + containerShm));
        Path after = shm.createSegment("nccl-AfterStall1", 4_100);
        Path held = shm.file("nccl-HeldAfterStall1");
        // made by its holder, held from its first instant: with grace 0s an unheld file is reaped at the next pass
        Process holder = new ProcessBuilder("sh", "-c",
            "exec 3<>\"$0\" && head -c 4100 /dev/zero >&3 && echo ready && exec sleep 3600", held.toString())
            .redirectErrorStream(true).start();
        try {
          assertThat(new String(holder.getInputStream().readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("ready\n");
          Eventually.until(() -> "nccl-AfterStall1 reaped while the filesystem stalls; log:\n" + read(log), PATIENCE,
              () -> !Files.exists(after));
          assertThat(held).as("a held segment is never reaped").exists();
          assertThat(AdviceClient.ask(socket, "PING", Duration.ofSeconds(10))).isEqualTo("pong\n");
          assertThat(AdviceClient.ask(socket, "ADVISE v1 dev=" + shm.dev()
              + " ranks=2 nccl=2.21.5", Duration.ofSeconds(10))).contains("SHMGUARD_MOUNT=" + shm.path());
        } finally {
          holder.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(read(log)).doesNotContain("pass_stalled");

        nfs.resume();
        Eventually.until(() -> "the container's mount watched again; log:\n" + read(log), PATIENCE,
            () -> read(log).contains("SHM_PATH=" + containerShm + " SHM_RECOVERED=1")
                && read(log).split("watching " + containerShm + " ", -1).length == 3);
        nfs.stall(); // and SIGTERM comes while it stalls
        Eventually.until(() -> "the second stall reported; log:\n" + read(log), PATIENCE,
            () -> read(log).split("SHMGUARD_EVENT=mount_stalled SHM_PATH=" + containerShm + "]", -1).length == 3);
      } finally {
        long t0 = System.nanoTime();
        daemon.destroy(); // SIGTERM, as systemd stops it
        boolean ended = daemon.waitFor(STOP_BOUND.toSeconds(), TimeUnit.SECONDS);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        if (!ended) {
          daemon.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        assertThat(ended).as("stopped within %s on SIGTERM while the filesystem stalls; log:\n%s", STOP_BOUND, read(log)).isTrue();
        assertThat(daemon.exitValue()).as(read(log)).isZero();
        assertThat(took).isLessThan(STOP_BOUND);
      }
    }
    assertThat(socket).doesNotExist();
  }

  @Test
  void cleanReapsAnUnheldLeakWhileAUsersFuseMountThatDeniesRootHasAFileHeld() throws Exception {
    Sandbox.require();
    try (FuseFixture denying = FuseFixture.ofNobody(); TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Process holder = denying.holdFile(true);
      assertThatThrownBy(() -> Files.readAttributes(denying.file(), "unix:ino")).isInstanceOf(AccessDeniedException.class);
      Path leak = shm.createSegment("nccl-DenyRoot1", 4_100);

      CliRun clean = CliRun.of("clean", "--json", "-c", TestConfig.watching(shm.path(), "0s").toString());

      assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
      assertThat(leak).doesNotExist();
      assertThat(holder.isAlive()).isTrue();
    }
  }

  @Test
  void cleanFinishesAndReapsElsewhereWhileAContainersRootStalls() throws Exception {
    Sandbox.require();
    try (FuseFixture nfs = FuseFixture.ofRoot(); TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      nfs.holdFile(false);
      Process container = nfs.containerRootedHere();
      Path leak = shm.createSegment("nccl-CliStall1", 4_100);
      nfs.stall();
      Path config = TestConfig.write("mounts: [auto, " + shm.path() + "]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");

      long t0 = System.nanoTime();
      CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());
      Duration took = Duration.ofNanos(System.nanoTime() - t0);

      assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
      assertThat(leak).as("reaped while /proc/%d/root/dev/shm stalls", container.pid()).doesNotExist();
      assertThat(took).isLessThan(STOP_BOUND);
    }
  }

  private static String read(Path log) {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
