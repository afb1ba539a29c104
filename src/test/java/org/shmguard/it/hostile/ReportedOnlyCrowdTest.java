package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Issue 30, item 4: uid 65534 keeps 20,000 Python shared-memory files ({@code psm_*}, a family
 * shmguard judges but by default only reports) on a tmpfs, all older than uid 1000's NCCL leak.
 * A pass examines at most reap.examineLimit (10,000) files per mount; the oldest-first window kept
 * the other user's files on every pass and never reached the leak. Files shmguard may reap by
 * name now come first, and owners share the places fairly: the leak is reaped within two sweeps,
 * and the other user's files stay.
 */
class ReportedOnlyCrowdTest {
  private static final Duration PATIENCE = Duration.ofSeconds(120);
  private static final int CROWD = 20_000;
  private static final String STRANGER = "65534";
  private static final String VICTIM = "1000";
  private final RecordingSink sink = new RecordingSink();

  @Test
  void anotherUsersCrowdOfReportedOnlyFilesDoesNotKeepALeakFromBeingReapedWithinTwoSweeps() throws Exception {
    Sandbox.require();
    Path mkfiles = CProgram.build("memory/mkfiles.c");
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777,nr_inodes=" + (CROWD + 1000))) {
      // psm_0000000 .. psm_0019999: Python's shared-memory names (psm_ and 8 hex digits), the oldest files
      Cmd.run("setpriv", "--reuid", STRANGER, "--regid", STRANGER, "--clear-groups", mkfiles.toString(),
          shm.path().toString(), "psm_0", String.valueOf(CROWD));
      Thread.sleep(50); // a clock tick apart: the leak is newer than every one of them
      Path leak = shm.file("nccl-Victim01");
      Cmd.run("setpriv", "--reuid", VICTIM, "--regid", VICTIM, "--clear-groups", "fallocate", "-l", "65536",
          leak.toString());
      assertThat(owner(leak)).isEqualTo(VICTIM);
      assertThat(owner(shm.file("psm_00000000"))).isEqualTo(STRANGER);

      // sweeps only when asked (the interval is an hour): the test counts them
      try (Daemon daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1s\n"
          + "  requireHostPidNamespace: false\ndaemon:\n  interval: 1h\n  heartbeat: 1h\n")), HostPaths.system(), sink,
          ServiceNotifier.none())) {
        Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
        Thread.sleep(1100); // the leak passes its grace

        sweep(daemon);
        sweep(daemon);

        assertThat(leak).as("uid 1000's leak, reaped within two sweeps beside uid 65534's " + CROWD + " files")
            .doesNotExist();
        assertThat(sink.of(EventKind.SEGMENT_REAPED)).as("the reap's event")
            .anySatisfy(a -> assertThat(a.field("SHM_SEGMENT")).isEqualTo("nccl-Victim01"));
        assertThat(count(shm.path(), "psm_")).as("the other user's files are theirs: reported, never reaped").isEqualTo(CROWD);
      }
    }
  }

  /** Asks for a sweep and waits until a pass has run after it. */
  private static void sweep(Daemon daemon) {
    long passes = daemon.status().passes();
    daemon.sweepNow();
    Eventually.until("a sweep", PATIENCE, () -> daemon.status().passes() > passes);
  }

  private static String owner(Path p) throws IOException {
    return String.valueOf(Files.getAttribute(p, "unix:uid"));
  }

  private static long count(Path dir, String prefix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix)).count();
    }
  }
}
