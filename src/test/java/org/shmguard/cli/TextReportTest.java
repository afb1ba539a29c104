package org.shmguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The human form of clean, from a real engine's pass over a real tmpfs: what it would reap and
 * free, or that there is nothing, in words. (Scan's is view.ScanTextTest's; the commands' exit
 * status and JSON are CleanAndScanOutputTest's.)
 */
class TextReportTest {

  @Test
  void cleanSaysWhatItWouldFreeOrThatThereIsNothing() {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      shm.createSegment("nccl-Loose2", 8192);

      String wouldReap = TextReport.clean(engine(shm, "0s").clean(true));
      String nothing = TextReport.clean(engine(shm, "1h").clean(true));

      assertThat(wouldReap).containsPattern("(?m)^would-reap " + shm.path() + "/nccl-Loose2  8\\.0K  .*leaked")
          .contains("Would free 8.0K.");
      assertThat(nothing).startsWith("Nothing to reap (1 file in 1 mount).\n");
    }
  }

  private static Engine engine(TmpfsMount shm, String grace) {
    return Engine.create(TestConfig.load(TestConfig.watching(shm.path(), grace)), HostPaths.system(), Clock.systemUTC());
  }
}
