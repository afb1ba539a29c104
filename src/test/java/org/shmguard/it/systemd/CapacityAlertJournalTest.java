package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Journald;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A capacity alert names what fills the mount: its largest files with their holders, or the
 * holders the daemon last saw and that have exited; in a real journald with every field, and as
 * one log line a person reads.
 */
class CapacityAlertJournalTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void capacityWarningNamesTheLargestFilesWithTheirHoldersOrLastHolders() throws Exception {
    try (Journald journald = Journald.start(); TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777")) {
      RecordingSink recorded = new RecordingSink();
      AlertSink journal = JournalAlertSink.choose();
      AlertSink both = new AlertSink() {
        @Override
        public void emit(Alert alert) {
          journal.emit(alert);
          recorded.emit(alert);
        }

        @Override
        public String describe() {
          return journal.describe();
        }
      };
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  dryRun: true\n  grace: 1h\n"
          + "  requireHostPidNamespace: false\ncapacity:\n  warn: 75\n  critical: 95\n  hysteresis: 5\n  topHolders: 3\n");
      Path a = shm.file("nccl-CapA01");
      Path b = shm.file("nccl-CapB01");
      try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), both, ServiceNotifier.none());
          Holder holdsA = Holder.start("create-map:3145728", a.toString());
          Holder holdsB = Holder.start("create-map:2097152", b.toString())) {
        Eventually.until("both holders watched", PATIENCE, () -> daemon.status().watchedHolders() == 2);
        holdsB.kill();
        recorded.awaitSegment(EventKind.SEGMENT_LEAKED, "nccl-CapB01", PATIENCE);
        shm.createSegment("nccl-CapC01", 1572864); // 6.5M of 8M: past warn (75%)

        Alert warning = recorded.await(x -> x.kind() == EventKind.CAPACITY_WARNING, PATIENCE).alert();

        assertThat(warning.message()).isEqualTo(shm.path() + " is 81% full (was ok, now warning): 6.5M of 8.0M used, 3 files; "
            + "largest: nccl-CapA01 3.0M held by pid " + holdsA.pid() + " (java); nccl-CapB01 2.0M last held by pid "
            + holdsB.pid() + " (java), exited; nccl-CapC01 1.5M unheld (grace)");
        String line = LogAlertSink.line(warning);
        assertThat(line).doesNotContain("\n").doesNotContain("uid -1").doesNotContain(" ? ");
        assertThat(line.length()).as(line).isLessThan(600);

        Eventually.until("the warning in the journal", PATIENCE,
            () -> !Journald.entries("SHMGUARD_EVENT", "capacity_warning").isEmpty());
        JsonNode e = Journald.entries("SHMGUARD_EVENT", "capacity_warning").get(0);
        assertThat(e.get("MESSAGE").asText()).isEqualTo(warning.message());
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(shm.path().toString());
        assertThat(e.get("SHM_USED_PERCENT").asText()).isEqualTo("81.3");
        assertThat(e.get("SHM_SIZE_BYTES").asText()).isEqualTo("8388608");
        assertThat(e.get("SHM_SEGMENTS").asText()).isEqualTo("3");
        assertThat(texts(e.get("SHM_LARGEST_FILE"))).containsExactly("nccl-CapA01", "nccl-CapB01", "nccl-CapC01");
        assertThat(texts(e.get("SHM_LARGEST_BYTES"))).containsExactly("3145728", "2097152", "1572864");
        assertThat(texts(e.get("SHM_HOLDER_PID"))).containsExactly(Integer.toString(holdsA.pid()));

        JsonNode leak = Journald.entries("SHM_SEGMENT", "nccl-CapB01").get(0);
        assertThat(leak.get("MESSAGE").asText()).startsWith("dry run: would reap " + b + " (2.0M, ")
            .contains("every process that held it has exited");
        assertThat(leak.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_leaked");
        assertThat(leak.get("SHM_VERDICT").asText()).isEqualTo("leaked");
        assertThat(leak.get("SHM_BYTES").asText()).isEqualTo("2097152");
        assertThat(leak.get("SHM_REASON").asText()).contains("every process that held it has exited");
        assertThat(leak.get("SHM_HOLDER_PID").asText()).isEqualTo(Integer.toString(holdsB.pid()));
        assertThat(b).exists();
      }
    }
  }

  private static List<String> texts(JsonNode n) {
    List<String> out = new ArrayList<>();
    if (n.isArray()) {
      n.forEach(x -> out.add(x.asText()));
    } else {
      out.add(n.asText());
    }
    return out;
  }
}
