package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** A real ENOSPC on a tiny tmpfs leaves what NCCL 2.19+ leaves: a 0-byte file nobody holds. */
class FailedCreationTest {

  @Test
  void zeroByteFileLeftByRealEnospcIsFailedCreationAndReaped() throws Exception {
    try (TmpfsMount tiny = TmpfsMount.create("size=64k")) {
      tiny.createSegment("filler", 60_000);
      Path seg = tiny.file("nccl-NoRoom");
      // fallocate(1) does what NCCL's ncclShmOpen does: create the file, then fail to extend it.
      Cmd.Result r = Cmd.exec("fallocate", "-l", "9637892", seg.toString());
      assertThat(r.status()).isNotZero();
      assertThat(r.err()).contains("No space left on device");
      assertThat(Files.size(seg)).isZero();
      Path config = TestConfig.watching(tiny.path(), "2m");

      JsonNode scan = CliRun.of("scan", "--json", "-c", config.toString()).json();
      assertThat(CliRun.verdictOf(scan, "nccl-NoRoom")).isEqualTo("failed-creation");
      // "filler" matches no reap pattern: counted with the mount's files, never listed.
      assertThat(scan.get("segments").findValuesAsText("name")).doesNotContain("filler");
      assertThat(scan.get("mounts").get(0).get("segments").asInt()).isEqualTo(2);
      assertThat(scan.get("mounts").get(0).get("matching").asInt()).isEqualTo(1);

      CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(seg).doesNotExist();
      assertThat(tiny.file("filler")).exists();
      assertThat(clean.json().get("actions").get(0).get("result").asText()).isEqualTo("reaped");
    }
  }
}
