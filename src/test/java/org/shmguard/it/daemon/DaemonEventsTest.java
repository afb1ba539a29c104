package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The daemon's event path on real tmpfs mounts and real processes: exits, bursts, mounts coming and going. */
class DaemonEventsTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private Daemon daemon;
  private TmpfsMount shm;

  @AfterEach
  void stop() {
    if (daemon != null) {
      daemon.close();
    }
    if (shm != null) {
      shm.close();
    }
  }

  private Daemon start(String yaml) throws IOException {
    daemon = Daemon.start(TestConfig.load(TestConfig.write(yaml)), HostPaths.system(), sink, ServiceNotifier.none());
    Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
    return daemon;
  }

  /** Asks for a sweep and waits until a pass has run after it. */
  private void passAgain() {
    long passes = daemon.status().passes();
    daemon.sweepNow();
    Eventually.until("another pass", PATIENCE, () -> daemon.status().passes() > passes);
  }

  private static String watching(Path mount, String grace) {
    return "mounts: [" + mount + "]\nreap:\n  grace: " + grace + "\n  requireHostPidNamespace: false\n";
  }

  @Test
  void segmentOfAKilledHolderIsReapedAtOnceNotAfterGrace() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    start(watching(shm.path(), "1h"));
    Path seg = shm.file("nccl-Kill01");
    try (Holder rank = Holder.start("create-map:9637892", seg.toString())) {
      Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
      assertThat(seg).exists();

      long killedAt = System.nanoTime();
      rank.kill();
      RecordingSink.Received reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-Kill01", PATIENCE);

      System.out.printf("holder SIGKILL -> segment reaped: %.1f ms%n", (reaped.nanoTime() - killedAt) / 1e6);
      assertThat(seg).doesNotExist();
      assertThat(reaped.alert().field("SHM_HOLDER_PID")).isEqualTo(Integer.toString(rank.pid()));
      assertThat(reaped.alert().field("SHM_REASON")).contains("every process that held it has exited");
    }
  }

  @Test
  void unheldSegmentIsReapedWhenItsGraceEndsNotAtTheNextSweep() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    // The sweep is an hour away: only the end of the grace can bring the pass that reaps it.
    start(watching(shm.path(), "2s") + "daemon:\n  interval: 1h\n");
    Path seg = shm.file("nccl-Grace1");
    Files.write(seg, new byte[4096]);

    RecordingSink.Received reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-Grace1", PATIENCE);

    assertThat(seg).doesNotExist();
    assertThat(reaped.alert().field("SHM_REASON")).contains("unheld and unchanged for").contains("grace 2s");
  }

  @Test
  void heldSegmentStaysWhileItsHolderLives() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    start(watching(shm.path(), "0s"));
    Path seg = shm.file("nccl-Held01");
    try (Holder rank = Holder.start("create-map:4100", seg.toString())) {
      Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
      passAgain();

      assertThat(seg).exists();
      assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
    }
  }

  @Test
  void burstOfTwentyThousandCreationsMissesNone() throws Exception {
    // 20,000 one-byte files take a page each (78 MiB): room for all of them, so a daemon that falls
    // behind under load shows as slow, never as ENOSPC in the test itself.
    shm = TmpfsMount.create("size=128m,mode=1777,nr_inodes=40000");
    start(watching(shm.path(), "0s"));
    int n = 20_000;
    Set<String> names = new HashSet<>();
    for (int i = 0; i < n; i++) {
      String name = String.format("nccl-%06d", i);
      names.add(name);
      Files.write(shm.file(name), new byte[] {1});
    }

    Eventually.until(() -> "all reaped; " + sink.of(EventKind.SEGMENT_REAPED).size() + " so far", Duration.ofMinutes(5),
        () -> sink.of(EventKind.SEGMENT_REAPED).size() >= n);

    Set<String> reaped = new HashSet<>();
    sink.of(EventKind.SEGMENT_REAPED).forEach(a -> reaped.add(a.field("SHM_SEGMENT")));
    assertThat(reaped).isEqualTo(names);
    try (Stream<Path> left = Files.list(shm.path())) {
      assertThat(left).isEmpty();
    }
    System.out.printf("20000 creations: %d passes, %d inotify queue overflows recovered by a full pass%n",
        daemon.status().passes(), daemon.status().overflows());
  }

  @Test
  void mountAddedAndRemovedWhileRunningIsPickedUp() throws Exception {
    Path later = Sandbox.MOUNTS.resolve("later-" + ProcessHandle.current().pid());
    Files.createDirectories(later);
    start(watching(later, "0s") + "daemon:\n  rediscover: 200ms\n");
    assertThat(daemon.status().last().mounts()).isEmpty();

    Cmd.run("mount", "-t", "tmpfs", "-o", "size=4m", "shmguard-test", later.toString());
    try {
      sink.await(a -> a.kind() == EventKind.MOUNT_ADDED && later.toString().equals(a.field("SHM_MOUNT")), PATIENCE);
      Files.write(later.resolve("nccl-Late01"), new byte[] {1});
      sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-Late01", PATIENCE);
    } finally {
      Cmd.run("umount", later.toString());
    }
    sink.await(a -> a.kind() == EventKind.MOUNT_REMOVED && later.toString().equals(a.field("SHM_MOUNT")), PATIENCE);
    Eventually.until("no mount left", PATIENCE, () -> daemon.status().watchedMounts() == 0);
  }

  @Test
  void containerShmIsWatchedWhileTheContainerRuns() throws Exception {
    start("mounts: [auto]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\ndaemon:\n  rediscover: 200ms\n");
    String name;
    try (Holder container = Holder.startInContainer("size=8m", "create-map:4100", "/dev/shm/nccl-Ctr001")) {
      RecordingSink.Received added = sink.await(a -> a.kind() == EventKind.MOUNT_ADDED
          && a.field("SHM_MOUNT").contains("/" + "root/dev/shm"), PATIENCE);
      name = added.alert().field("SHM_MOUNT");
      Eventually.until("the container's segment is seen held", PATIENCE, () -> daemon.status().watchedHolders() >= 1);
    }
    sink.await(a -> a.kind() == EventKind.MOUNT_REMOVED && name.equals(a.field("SHM_MOUNT")), PATIENCE);
  }

  @Test
  void fullMountRaisesOneWarningAndTheFailedAllocationItsOwnEvent() throws Exception {
    shm = TmpfsMount.create("size=10m,mode=1777");
    start(watching(shm.path(), "1h"));
    Files.write(shm.file("filler"), new byte[9 * 1024 * 1024]);
    sink.await(a -> a.kind() == EventKind.CAPACITY_WARNING, PATIENCE);

    Files.write(shm.file("nccl-Fail01"), new byte[0]);
    RecordingSink.Received failed = sink.awaitSegment(EventKind.ALLOCATION_FAILED, "nccl-Fail01", PATIENCE);
    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-Fail01", PATIENCE);

    assertThat(Long.parseLong(failed.alert().field("SHM_FREE_BYTES"))).isLessThan(9_637_892L);
    Files.write(shm.file("filler2"), new byte[] {1}); // more events at the same level: no second warning
    passAgain();
    passAgain();
    assertThat(sink.of(EventKind.CAPACITY_WARNING)).hasSize(1);

    Files.delete(shm.file("filler"));
    sink.await(a -> a.kind() == EventKind.CAPACITY_OK, PATIENCE);
  }
}
