package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Issue 30, item 6: uid 65534 creates and removes empty {@code nccl-*} files in a loop on a tmpfs
 * with room (as any user may on the host's /dev/shm). Each such file is what a failed NCCL
 * extension leaves, and each raised the node's ERROR allocation_failed (1,822 in five minutes).
 * They are the user's own matter: no node error, and what is raised is a notice carrying
 * SHM_SCOPE=owner and SHM_OWNER_UID=65534, at most one per owner in five minutes. The node's error
 * on a full tmpfs is DaemonEventsTest's.
 */
class EmptyNcclChurnTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private static final int CHURN_SECONDS = 6;
  private final RecordingSink sink = new RecordingSink();

  @Test
  void aUsersChurnOfEmptyNcclFilesRaisesNoNodeErrorOnlyOneOwnerScopedNotice() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777")) {
      try (Daemon daemon = Daemon.start(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 1h\n"
          + "  requireHostPidNamespace: false\n")), HostPaths.system(), sink, ServiceNotifier.none())) {
        Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);

        // create an empty nccl-* file every 50 ms and remove the one made a second earlier, for a bounded time
        String loop = "end=$(($(date +%s) + " + CHURN_SECONDS + ")); i=0; while [ $(date +%s) -lt $end ]; do "
            + ": > \"$1/nccl-Churn$i\"; rm -f \"$1/nccl-Churn$((i - 20))\"; i=$((i + 1)); sleep 0.05; done; "
            + "rm -f \"$1\"/nccl-Churn*";
        Process churn = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
            "sh", "-c", loop, "sh", shm.path().toString()).inheritIO().start();
        try {
          assertThat(churn.waitFor(CHURN_SECONDS + 30, TimeUnit.SECONDS)).as("the churn ends").isTrue();
        } finally {
          churn.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        long passes = daemon.status().passes();
        daemon.sweepNow();
        Eventually.until("a pass after the churn", PATIENCE, () -> daemon.status().passes() > passes);

        List<Alert> failed = sink.of(EventKind.ALLOCATION_FAILED);
        long seen = sink.of(EventKind.SEGMENT_REAPED).stream().filter(a -> a.field("SHM_SEGMENT").startsWith("nccl-Churn"))
            .count();
        System.out.printf("%d empty nccl-* files of uid 65534 reaped, %d allocation_failed events%n", seen, failed.size());
        assertThat(seen).as("the daemon saw the churn: failed creations, reaped").isGreaterThan(1);
        assertThat(failed).as("no node error").noneMatch(a -> a.priority() <= 3);
        assertThat(failed).as("one event for the owner, however many files").hasSize(1);
        assertThat(failed.get(0).priority()).isEqualTo(5);
        assertThat(failed.get(0).field("SHM_SCOPE")).isEqualTo("owner");
        assertThat(failed.get(0).field("SHM_OWNER_UID")).isEqualTo("65534");
        assertThat(failed.get(0).message()).contains("uid 65534's own file, not the node's");
      }
    }
  }
}
