package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * What a /proc pass costs when ordinary users hold many fds: every fd that is not a socket, pipe
 * or anonymous inode costs an fdinfo read, however cheap it was for the user (dups of /dev/null).
 * Prints the time of a clean beside 4 processes of 19,000 fds each; asserts only that it finishes
 * and reaps.
 */
class ManyFdsPassTimeTest {
  @Test
  void aCleanBesideUsersWithManyFdsFinishesAndReaps() throws Exception {
    Path bin = CProgram.build("redteam/many-fds.c");
    List<Process> users = new ArrayList<>();
    try (TmpfsMount watched = TmpfsMount.create("size=8m,mode=1777")) {
      Path config = TestConfig.watching(watched.path(), "0s");
      CliRun.of("clean", "-c", config.toString()); // loads the classes first
      long t0 = System.nanoTime();
      CliRun.of("clean", "-c", config.toString());
      long quiet = System.nanoTime() - t0;
      long fds = 0;
      for (int i = 0; i < 4; i++) {
        Process p = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
            bin.toString(), "19000").redirectErrorStream(true).start();
        users.add(p);
        String line = new String(p.getInputStream().readNBytes(12)).strip();
        assertThat(line).startsWith("ready ");
        fds += Long.parseLong(line.substring(6));
      }
      Path leak = watched.createSegment("nccl-Leak07", 4_100);

      t0 = System.nanoTime();
      CliRun clean = CliRun.of("clean", "-c", config.toString());
      long busy = System.nanoTime() - t0;

      System.out.printf("clean: %d ms with no user's fds, %d ms beside %d fds of ordinary users%n", quiet / 1_000_000,
          busy / 1_000_000, fds);
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leak).doesNotExist();
    } finally {
      for (Process p : users) {
        p.destroyForcibly();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
