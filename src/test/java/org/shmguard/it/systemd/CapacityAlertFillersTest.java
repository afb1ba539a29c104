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
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Journald;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * On a shared /dev/shm the filler is usually not NCCL: a 77 MB file a live process maps and a
 * 12 MB one nobody holds, beside an 8 MB NCCL segment. The daemon's capacity alert (in a real
 * journald) and {@code shmguard scan} name the two by size with their holders, although their
 * names are ones no reap pattern allows, and the listing still keeps only a few of them.
 */
class CapacityAlertFillersTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void aCapacityAlertAndScanNameTheLargestFilesWhateverTheirNames() throws Exception {
    try (Journald journald = Journald.start(); TmpfsMount shm = TmpfsMount.create("size=100m,mode=1777")) {
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
      Path weights = shm.createSegment("weights.bin", 77 << 20);
      shm.createSegment("data.bin", 12 << 20);
      shm.createSegment("nccl-TEST", 8 << 20);
      for (int i = 0; i < 40; i++) {
        shm.createSegment("tiny-" + i, 4096); // more small files than the listing keeps
      }
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  dryRun: true\n  grace: 1h\n"
          + "  requireHostPidNamespace: false\ncapacity:\n  warn: 75\n  critical: 95\n  hysteresis: 5\n  topHolders: 3\n");
      try (Holder holder = Holder.start("map", weights.toString());
          Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), both, ServiceNotifier.none())) {
        Alert critical = recorded.await(x -> x.kind() == EventKind.CAPACITY_CRITICAL, PATIENCE).alert();

        assertThat(critical.message()).startsWith(shm.path() + " is 97% full (was ok, now critical): ")
            .endsWith("; largest: weights.bin 77.0M held by pid " + holder.pid() + " (java); data.bin 12.0M unheld; "
                + "nccl-TEST 8.0M unheld (grace); not grown: remounting is off (remount.enabled: false)");
        Eventually.until("the alert in the journal", PATIENCE,
            () -> !Journald.entries("SHMGUARD_EVENT", "capacity_critical").isEmpty());
        JsonNode e = Journald.entries("SHMGUARD_EVENT", "capacity_critical").get(0);
        assertThat(texts(e.get("SHM_LARGEST_FILE"))).containsExactly("weights.bin", "data.bin", "nccl-TEST");
        assertThat(texts(e.get("SHM_LARGEST_BYTES"))).containsExactly("80740352", "12582912", "8388608");
        assertThat(texts(e.get("SHM_HOLDER_PID"))).containsExactly(Integer.toString(holder.pid()));

        CliRun scan = CliRun.of("scan", "-c", config.toString());
        assertThat(scan.out()).contains("  " + shm.path() + ": largest: weights.bin 77.0M held by pid " + holder.pid()
            + " (java); data.bin 12.0M unheld; nccl-TEST 8.0M unheld (grace); tiny-");
        JsonNode largest = CliRun.scanJson(config).at("/mounts/0/largest");
        assertThat(largest).hasSize(5);
        assertThat(largest.get(0).path("name").asText()).isEqualTo("weights.bin");
        assertThat(largest.get(0).path("allocatedBytes").asLong()).isEqualTo(77L << 20);
        assertThat(largest.get(0).path("holderPids").toString()).isEqualTo("[" + holder.pid() + "]");
        assertThat(largest.get(0).path("examined").asBoolean()).isFalse();
        assertThat(largest.get(2).path("name").asText()).isEqualTo("nccl-TEST");
        assertThat(largest.get(2).path("examined").asBoolean()).isTrue();
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
