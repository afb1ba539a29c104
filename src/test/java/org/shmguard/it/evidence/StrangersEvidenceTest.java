package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.PidNsCreator;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Evidence belongs to the file's owner and job (issue 30): on a real tmpfs every user may write,
 * uid 1000's files and uid 65534 as the stranger, each hold a real process made with setpriv. A
 * stranger's O_PATH lookup, read-only fd or read-only mapping of another user's closed, young
 * file, and its exit, reap nothing through the exit path or the full pass; the owner's own reader
 * does. Another user's sleepers with a dead creator's pid keep no leak that is not theirs.
 */
class StrangersEvidenceTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  /**
   * A python3 process of {@code uid} that holds {@code path} as {@code how} ("path": O_PATH,
   * "read": O_RDONLY, "map": a read-only shared mapping with its fd closed) and says "ready".
   */
  private static Process holdAs(int uid, String how, Path path) throws Exception {
    String py = "import os, mmap, sys, time\n"
        + "how, p = sys.argv[1], sys.argv[2]\n"
        + "if how == 'path':\n  fd = os.open(p, os.O_PATH)\n"
        + "elif how == 'read':\n  fd = os.open(p, os.O_RDONLY)\n"
        + "else:\n  fd = os.open(p, os.O_RDONLY); m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ); os.close(fd)\n"
        + "print('ready', flush=True)\n"
        + "time.sleep(600)\n";
    Process p = new ProcessBuilder("setpriv", "--reuid", Integer.toString(uid), "--regid", Integer.toString(uid),
        "--clear-groups", "/usr/bin/python3", "-c", py, how, path.toString()).redirectErrorStream(true).start();
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).as(how + " holder of " + path).isEqualTo("ready");
    return p;
  }

  private static Path ownedFile(TmpfsMount shm, String name, String mode) throws Exception {
    Path f = shm.createSegment(name, 4100);
    Cmd.run("chown", "1000:1000", f.toString());
    Cmd.run("chmod", mode, f.toString());
    return f;
  }

  private static void end(Process p) throws InterruptedException {
    p.destroyForcibly();
    assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aStrangersLookupReaderOrMappingAndItsExitReapNothingInsideTheGraceButTheOwnersReaderDoes() throws Exception {
    RecordingSink sink = new RecordingSink();
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path privateFile = ownedFile(shm, "nccl-Priv01", "0600");
      Path readable = ownedFile(shm, "nccl-Read01", "0644");
      Path mapped = ownedFile(shm, "nccl-Map001", "0644");
      Path owners = ownedFile(shm, "nccl-Own001", "0600");
      Path untouched = ownedFile(shm, "nccl-None01", "0600");
      List<Process> strangers = new ArrayList<>();
      strangers.add(holdAs(65534, "path", privateFile));
      strangers.add(holdAs(65534, "read", readable));
      strangers.add(holdAs(65534, "map", mapped));
      Process owner = holdAs(1000, "read", owners);
      try (Daemon daemon = Daemon.start(TestConfig.load(TestConfig.watching(shm.path(), "10m")), HostPaths.system(),
          sink, ServiceNotifier.none())) {
        daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
        Eventually.until("the daemon watches the four holders' exits", PATIENCE,
            () -> daemon.status().watchedHolders() == 4);

        for (Process p : strangers) {
          end(p);
        }
        end(owner);
        Eventually.until("the owner's reader's exit reaps its file", PATIENCE, () -> !Files.exists(owners));
        daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // the full pass judges them again
        daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);

        assertThat(privateFile).as("a stranger's O_PATH lookup of a 0600 file").exists();
        assertThat(readable).as("a stranger's read-only fd of a 0644 file").exists();
        assertThat(mapped).as("a stranger's read-only mapping of a 0644 file").exists();
        assertThat(untouched).as("the control nobody touched").exists();
        List<String> reaped = sink.of(EventKind.SEGMENT_REAPED).stream().map(a -> a.field("SHM_SEGMENT")).toList();
        assertThat(reaped).containsExactly("nccl-Own001");
        Alert own = sink.of(EventKind.SEGMENT_REAPED).get(0);
        assertThat(own.field("SHM_REASON")).contains("every process that held it has exited").contains("python3");
      } finally {
        strangers.forEach(Process::destroyForcibly);
        owner.destroyForcibly();
      }
    }
  }

  @Test
  void theExitPathsReapIsToldAtOnceWithTheAgeAtTheReapAndAStopRightAfterItLosesNoEvent() throws Exception {
    RecordingSink sink = new RecordingSink();
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = ownedFile(shm, "nccl-Age001", "0600");
      Process rank = holdAs(1000, "read", seg);
      try {
        Daemon daemon = Daemon.start(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system(), sink,
            ServiceNotifier.none());
        try {
          daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
          Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
          Thread.sleep(3_000); // the file is at least 3 s old when it is reaped
          end(rank);
          long deadline = System.nanoTime() + PATIENCE.toNanos();
          while (Files.exists(seg) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
          }
        } finally {
          daemon.close(); // at once after the unlink: the reap's event must be told all the same
        }
        assertThat(seg).doesNotExist();
        List<Alert> reaped = sink.of(EventKind.SEGMENT_REAPED);
        assertThat(reaped).as("the reap's event, before the stop").singleElement().satisfies(a -> {
          assertThat(a.field("SHM_SEGMENT")).isEqualTo("nccl-Age001");
          assertThat(Long.parseLong(a.field("SHM_AGE_SECONDS"))).as("the age at the reap").isGreaterThanOrEqualTo(3);
          assertThat(a.field("SHM_REASON")).contains("each exit seen on its pidfd");
        });
      } finally {
        rank.destroyForcibly();
      }
    }
  }

  @Test
  void anotherUsersSleepersWithADeadCreatorsPidKeepNoLeakThatIsNotTheirs() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777")) {
      // The stranger first: pid 30000 in a user and PID namespace of their own, asleep, started
      // before the leak is born (so its start time rules nothing out).
      Process stranger = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
          "unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "sh", "-c",
          "echo 29999 > /proc/sys/kernel/ns_last_pid && sh -c 'echo $$ ready; exec sleep 600'").start();
      try {
        String line = new BufferedReader(new InputStreamReader(stranger.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(line).as("the stranger's sleeper has pid 30000 in their namespace").isEqualTo("30000 ready");
        Thread.sleep(1_500);
        // uid 1000's job, pid 30000 in its own PID namespace, made torch_30000_* and was killed.
        PidNsCreator job = PidNsCreator.start(shm.path(), 30000, "torch_%d_3735928559_0", "the dead job's batch");
        Path leak = job.file();
        job.close();
        Cmd.run("chown", "1000:1000", leak.toString());
        Thread.sleep(11_000); // past the 10 s grace

        Cmd.Result r = CliRun.asUnit("clean", "--json", "-c", TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  requireHostPidNamespace: false\n"
                + "families:\n  pytorch:\n    grace: 10s\n").toString());

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(leak).as(r.out()).doesNotExist();
        assertThat(r.out()).contains("runs as another user (uid 65534), not the file's owner (uid 1000)");
      } finally {
        stranger.descendants().forEach(ProcessHandle::destroyForcibly);
        stranger.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    }
  }
}
