package org.shmguard.it.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** What clean and scan print on real tmpfs mounts: every candidate with its verdict, reason and blocker; where scan may differ from the daemon. */
class CleanAndScanOutputTest {

  @Test
  void cleanDryRunListsLeakedFilesWithVerdictReasonAndBlockerWhenReapingIsBlocked() {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path leaked = shm.createSegment("nccl-Blk001", 9_637_892);
      shm.createSegment("nccl-Blk002", 0);
      // The sandbox is a PID namespace of its own: by default (reap.requireHostPidNamespace) nothing may be reaped.
      Path config = TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 0s\n");

      CliRun text = CliRun.of("clean", "--dry-run", "-c", config.toString());
      CliRun json = CliRun.of("clean", "--dry-run", "--json", "-c", config.toString());

      assertThat(text.status()).isEqualTo(1);
      assertThat(text.out()).contains("blocked    " + shm.path() + "/nccl-Blk001  9.2M  nccl-shm-recv, age ")
          .contains(", leaked: unheld and unchanged for ")
          .contains("; not reaped: shmguard is not in the host's PID namespace")
          .contains("blocked    " + shm.path() + "/nccl-Blk002  0B  nccl-empty, age ")
          .contains(", failed-creation: 0 bytes and unheld")
          .contains("2 leaked files (9.2M) are not reaped: see \"not reaping\" below.")
          .contains("not reaping: shmguard is not in the host's PID namespace")
          .doesNotContain("Nothing to reap");
      JsonNode actions = json.json().get("actions");
      assertThat(actions).hasSize(2);
      assertThat(actions.get(0).get("result").asText()).isEqualTo("blocked");
      assertThat(actions.get(0).get("detail").asText()).contains("not in the host's PID namespace");
      assertThat(actions.get(0).get("segment").get("verdict").asText()).isIn("leaked", "failed-creation");
      assertThat(json.json().get("blockers")).hasSize(1);
      assertThat(leaked).exists();
    }
  }

  @Test
  void cleanWithNothingToReapCountsInWords() {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      shm.createSegment("nccl-Young1", 4096);

      CliRun run = CliRun.of("clean", "--dry-run", "-c", TestConfig.watching(shm.path(), "1h").toString());

      assertThat(run.status()).isZero();
      assertThat(run.out()).startsWith("Nothing to reap (1 file in 1 mount).\n");
    }
  }

  @Test
  void scanSaysWhereTheDaemonWithItsHolderHistoryMayDisagree() {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      shm.createSegment("nccl-Grace1", 4096);
      Path config = TestConfig.watching(shm.path(), "1h");

      CliRun text = CliRun.of("scan", "-c", config.toString());
      JsonNode json = CliRun.scanJson(config);

      assertThat(text.out()).contains("  grace*  ").contains("\ngrace*: this scan has no holder history. The daemon remembers who")
          .contains("without waiting out reap.grace");
      assertThat(text.out().lines()).allSatisfy(l -> assertThat(l.length()).isLessThanOrEqualTo(120));
      assertThat(json.get("segments").get(0).get("daemonMayDiffer").asBoolean()).isTrue();
      assertThat(json.get("notes").get(0).asText()).startsWith("grace*: this scan has no holder history.");
    }
  }

  @Test
  void scanOfOnlyHeldFilesHasNoSuchNote() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=16m");
        Holder h = Holder.start("create-map:4096", shm.file("nccl-Held01").toString())) {
      Path config = TestConfig.watching(shm.path(), "1h");

      CliRun text = CliRun.of("scan", "-c", config.toString());
      JsonNode json = CliRun.scanJson(config);

      assertThat(text.out()).contains("held").doesNotContain("grace*");
      assertThat(json.get("segments").get(0).has("daemonMayDiffer")).isFalse();
      assertThat(json.get("notes")).isEmpty();
    }
  }
}
