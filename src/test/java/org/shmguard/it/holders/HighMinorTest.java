package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Device minors above 255 are written "00:10a" in maps and split across two bit fields in
 * st_dev; psmisc's fuser mismatched them for years. Mount tmpfs instances until the kernel hands
 * out such a minor, then hold a segment on it.
 */
class HighMinorTest {

  @Test
  void holdersOnATmpfsWithMinorAbove255AreMatched() throws Exception {
    List<TmpfsMount> fillers = new ArrayList<>();
    TmpfsMount high = null;
    try {
      for (int i = 0; i < 600 && high == null; i++) {
        TmpfsMount m = TmpfsMount.create("size=1m");
        if (m.dev().minor() > 255) {
          high = m;
        } else {
          fillers.add(m);
        }
      }
      assertThat(high).as("a tmpfs with a minor above 255").isNotNull();
      Dev dev = high.dev();
      Path held = high.createSegment("nccl-HiMin1", 4100);
      Path leaked = high.createSegment("nccl-HiMin2", 4100);
      Path config = TestConfig.watching(high.path(), "0s");
      try (Holder h = Holder.start("map", held.toString())) {
        JsonNode scan = CliRun.of("scan", "--json", "-c", config.toString()).json();

        assertThat(scan.get("mounts").get(0).get("dev").asText()).isEqualTo(dev.toString());
        assertThat(CliRun.holderPids(scan, "nccl-HiMin1")).containsExactly(h.pid());
        assertThat(CliRun.verdictOf(scan, "nccl-HiMin2")).isEqualTo("leaked");

        CliRun.of("clean", "-c", config.toString());
        assertThat(held).exists();
        assertThat(leaked).doesNotExist();
      }
    } finally {
      if (high != null) {
        high.close();
      }
      fillers.forEach(TmpfsMount::close);
    }
  }
}
