package org.shmguard.it.systemd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.AlertSink;
import org.shmguard.alert.EventKind;
import org.shmguard.systemd.JournalAlertSink;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.TestConfig;

/** Alerts through sd_journal_sendv into a real systemd-journald, read back with journalctl -o json. */
class JournalAlertSinkTest {

  @Test
  void alertArrivesInTheJournalWithEveryField() throws Exception {
    try (Journald journald = Journald.start()) {
      AlertSink sink = JournalAlertSink.choose();
      assertThat(sink).isInstanceOf(JournalAlertSink.class);

      sink.emit(Alert.of(EventKind.SEGMENT_REAPED, "reaped /dev/shm/nccl-Jrn001 (9637892 bytes)")
          .with("SHM_MOUNT", "/dev/shm").with("SHM_SEGMENT", "nccl-Jrn001").with("SHM_BYTES", 9_637_892)
          .with("SHM_HOLDER_PID", 4242).with("SHM_HOLDER_COMM", "python3").with("SHM_HOLDER_PID", 4243)
          .with("SHM_HOLDER_COMM", "torchrun").with("SHM_CONTAINER", "docker:0123456789ab"));

      Eventually.until("the entry in the journal", Duration.ofSeconds(30),
          () -> !Journald.entries("SHM_SEGMENT", "nccl-Jrn001").isEmpty());
      JsonNode e = Journald.entries("SHM_SEGMENT", "nccl-Jrn001").get(0);
      assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
      assertThat(e.get("MESSAGE_ID").asText()).isEqualTo("daffc78e5242459393e7bf74b4792e72");
      assertThat(e.get("PRIORITY").asText()).isEqualTo("5");
      assertThat(e.get("SYSLOG_IDENTIFIER").asText()).isEqualTo("shmguard");
      assertThat(e.get("MESSAGE").asText()).isEqualTo("reaped /dev/shm/nccl-Jrn001 (9637892 bytes)");
      assertThat(e.get("SHM_MOUNT").asText()).isEqualTo("/dev/shm");
      assertThat(e.get("SHM_BYTES").asText()).isEqualTo("9637892");
      assertThat(e.get("SHM_CONTAINER").asText()).isEqualTo("docker:0123456789ab");
      // A repeated field comes back as a JSON array: one value per holder.
      assertThat(texts(e.get("SHM_HOLDER_PID"))).containsExactly("4242", "4243");
      assertThat(texts(e.get("SHM_HOLDER_COMM"))).containsExactly("python3", "torchrun");
      assertThat(e.get("_PID").asLong()).isEqualTo(ProcessHandle.current().pid());
    }
  }

  @Test
  void daemonReportsAReapToJournaldWithItsEvidence() throws Exception {
    try (Journald journald = Journald.start();
        org.shmguard.testing.TmpfsMount shm = org.shmguard.testing.TmpfsMount.create("size=16m,mode=1777")) {
      java.nio.file.Path seg = shm.file("nccl-Jrn002");
      try (org.shmguard.daemon.Daemon daemon = org.shmguard.daemon.Daemon.start(
              TestConfig.load(TestConfig.watching(shm.path(), "1h")), org.shmguard.host.HostPaths.system(),
              JournalAlertSink.choose(), ServiceNotifier.none());
          org.shmguard.testing.Holder rank = org.shmguard.testing.Holder.start("create-map:9637892", seg.toString())) {
        Eventually.until("the holder watched", Duration.ofSeconds(60), () -> daemon.status().watchedHolders() == 1);
        rank.kill();
        Eventually.until("the reap in the journal", Duration.ofSeconds(60),
            () -> !Journald.entries("SHM_SEGMENT", "nccl-Jrn002").isEmpty());

        JsonNode e = Journald.entries("SHM_SEGMENT", "nccl-Jrn002").get(0);
        assertThat(e.get("SHMGUARD_EVENT").asText()).isEqualTo("segment_reaped");
        assertThat(e.get("SHM_MOUNT").asText()).isEqualTo(shm.path().toString());
        assertThat(e.get("SHM_BYTES").asLong()).isGreaterThan(0);
        assertThat(e.get("SHM_HOLDER_PID").asText()).isEqualTo(Integer.toString(rank.pid()));
        assertThat(e.get("SHM_HOLDER_COMM").asText()).isEqualTo("java");
        assertThat(e.get("MESSAGE").asText()).startsWith("reaped " + shm.path() + "/nccl-Jrn002");
        assertThat(Journald.entries("SHMGUARD_EVENT", "mount_added")).isNotEmpty();
      }
    }
  }

  @Test
  void whenJournaldStopsAlertsGoToTheLogAndReturnToTheJournalWhenItIsBack() throws Exception {
    try (Journald first = Journald.start()) {
      AlertSink sink = JournalAlertSink.choose();
      first.stop();
      sink.emit(Alert.of(EventKind.CAPACITY_WARNING, "while journald is down").with("SHM_MOUNT", "/run/x-down"));
    }
    try (Journald second = Journald.start()) {
      AlertSink sink = JournalAlertSink.choose();
      sink.emit(Alert.of(EventKind.CAPACITY_OK, "journald is back").with("SHM_MOUNT", "/run/x-back"));
      Eventually.until("the entry after the restart", Duration.ofSeconds(30),
          () -> !Journald.entries("SHM_MOUNT", "/run/x-back").isEmpty());
      assertThat(Journald.entries("SHM_MOUNT", "/run/x-down")).isEmpty();
    }
  }

  @Test
  void withoutJournaldTheSinkSaysWhereAlertsGo() {
    org.shmguard.testing.Sandbox.require();
    AlertSink sink = JournalAlertSink.choose(); // no journald in the sandbox's /run now
    assertThat(sink).isNotInstanceOf(JournalAlertSink.class);
    assertThat(sink.describe()).contains("journald is not running").contains("alerts to standard error");
    sink.emit(Alert.of(EventKind.SUMMARY, "a summary with nowhere but the log to go"));
  }

  private static List<String> texts(JsonNode n) {
    if (n.isArray()) {
      java.util.List<String> out = new java.util.ArrayList<>();
      n.forEach(x -> out.add(x.asText()));
      return out;
    }
    return List.of(n.asText());
  }
}
