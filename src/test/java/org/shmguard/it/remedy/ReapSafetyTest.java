package org.shmguard.it.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** scan and clean on a real tmpfs with real holder processes: the leaked goes, the held stays. */
class ReapSafetyTest {
  private TmpfsMount shm;
  private Path config;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create("size=64m,mode=1777");
    config = TestConfig.watching(shm.path(), "0s");
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  @Test
  void leakedFullSizeSegmentIsReaped() {
    Path seg = shm.createSegment("nccl-Lk0001", 9_637_892);

    CliRun run = CliRun.of("clean", "--json", "-c", config.toString());

    assertThat(run.status()).as(run.err()).isZero();
    assertThat(Files.exists(seg)).isFalse();
    JsonNode action = run.json().get("actions").get(0);
    assertThat(action.get("result").asText()).isEqualTo("reaped");
    assertThat(action.get("segment").get("kind").asText()).isEqualTo("nccl-shm-recv");
  }

  @Test
  void fdMapAndUnlinkedMappingHoldersKeepTheirSegments() {
    Path byFd = shm.createSegment("nccl-ByFd01", 4_100);
    Path byMap = shm.createSegment("nccl-ByMap1", 9_637_892);
    Path unlinked = shm.createSegment("nccl-Gone01", 9_637_892);
    try (Holder fd = Holder.start("fd", byFd.toString());
        Holder map = Holder.start("map", byMap.toString());
        Holder hidden = Holder.start("map-unlink", unlinked.toString())) {

      JsonNode scan = CliRun.of("scan", "--json", "-c", config.toString()).json();
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(byFd).exists();
      assertThat(byMap).exists();
      assertThat(CliRun.verdictOf(scan, "nccl-ByFd01")).isEqualTo("held");
      assertThat(CliRun.holderPids(scan, "nccl-ByFd01")).containsExactly(fd.pid());
      assertThat(CliRun.holderPids(scan, "nccl-ByMap1")).containsExactly(map.pid());
      JsonNode mount = scan.get("mounts").get(0);
      assertThat(mount.get("hiddenBytes").asLong()).isGreaterThanOrEqualTo(9_637_892L);
      assertThat(mount.get("hidden").get(0).get("holders").get(0).get("pid").asInt()).isEqualTo(hidden.pid());
    }
  }
}
