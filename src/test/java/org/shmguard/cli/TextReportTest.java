package org.shmguard.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The human forms of scan and clean, from a real engine's judgement of a real tmpfs: the mount
 * table, each file's row with its verdict and holder, the hidden bytes of an unlinked file still
 * mapped, and what clean says it would do. (The commands' exit status and JSON are
 * CleanAndScanOutputTest's.)
 */
class TextReportTest {

  @Test
  void scanShowsTheMountEachFileWithItsVerdictAndHolderAndWhatIsHidden() {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Path held = shm.createSegment("nccl-Held01", 8192);
      Path hidden = shm.createSegment("nccl-Gone01", 65536);
      shm.createSegment("nccl-Loose1", 4096);
      try (Holder h = Holder.start("map", held.toString(), "map-unlink", hidden.toString())) {
        Judgement j = engine(shm, "0s").judge();

        String text = TextReport.scan(j);

        assertThat(text).contains("MOUNT", "DEV", "USE%", "HIDDEN", "ORIGIN")
            .containsPattern("(?m)^" + shm.path() + " +" + shm.dev() + " +4\\.0M +.* 64\\.0K +2 +configured *$");
        String holder = h.pid() + " java (root)";
        assertThat(text).containsPattern("(?m)^" + shm.path() + " +nccl-Held01 +8\\.0K +\\S+ +nccl +held +" + java.util.regex.Pattern.quote(holder) + " *$");
        assertThat(text).containsPattern("(?m)^" + shm.path() + " +nccl-Loose1 +4\\.0K +\\S+ +nccl +leaked +unheld and unchanged for ");
        assertThat(text).contains("  hidden in " + shm.path() + ": 64.0K " + hidden + " (deleted) held by " + holder + "\n");
      }
    }
  }

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

  @Test
  void longTextIsWrappedAtSpaces() {
    assertThat(TextReport.wrap("one two three four", 9)).isEqualTo("one two\nthree\nfour\n");
  }

  private static Engine engine(TmpfsMount shm, String grace) {
    return Engine.create(TestConfig.load(TestConfig.watching(shm.path(), grace)), HostPaths.system(), Clock.systemUTC());
  }
}
