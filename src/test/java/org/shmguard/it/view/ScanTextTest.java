package org.shmguard.it.view;

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
import org.shmguard.view.ScanText;

/**
 * The human form of scan, from a real engine's judgement of a real tmpfs: the mount table, each
 * file's row with its verdict and holder, and the hidden bytes of an unlinked file still mapped.
 */
class ScanTextTest {

  @Test
  void scanShowsTheMountEachFileWithItsVerdictAndHolderAndWhatIsHidden() {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Path held = shm.createSegment("nccl-Held01", 8192);
      Path hidden = shm.createSegment("nccl-Gone01", 65536);
      shm.createSegment("nccl-Loose1", 4096);
      try (Holder h = Holder.start("map", held.toString(), "map-unlink", hidden.toString())) {
        Judgement j = engine(shm, "0s").judge();

        String text = ScanText.scan(j);

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
  void longTextIsWrappedAtSpaces() {
    assertThat(ScanText.wrap("one two three four", 9)).isEqualTo("one two\nthree\nfour\n");
  }

  private static Engine engine(TmpfsMount shm, String grace) {
    return Engine.create(TestConfig.load(TestConfig.watching(shm.path(), grace)), HostPaths.system(), Clock.systemUTC());
  }
}
