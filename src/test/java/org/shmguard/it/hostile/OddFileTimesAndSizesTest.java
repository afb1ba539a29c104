package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Files an ordinary user can make with values at the edges: a modification time before 1970 and
 * one far in the future (touch -d), and a sparse file of the largest size tmpfs allows (2^63 - 1
 * bytes, no page allocated). shmguard must still list, judge and reap the others' leaks, and say
 * something sensible about these.
 */
class OddFileTimesAndSizesTest {
  @Test
  void filesWithEdgeTimesAndTheLargestSizeDoNotStopScansOrReaps() {
    try (TmpfsMount shm = TmpfsMount.create("size=8m,mode=1777")) {
      Path leak = shm.createSegment("nccl-Leak08", 4_100);
      String dir = shm.path().toString();
      Cmd.run("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c",
          "cd \"$1\" && touch nccl-Old001 other-Old && touch -d '1901-12-14 00:00:00 UTC' nccl-Old001 other-Old"
              + " && touch nccl-Fut001 other-Fut && touch -d '2400-01-01 00:00:00 UTC' nccl-Fut001 other-Fut"
              + " && truncate -s 9223372036854775807 nccl-Big001 nccl-Big002 nccl-Big003 other-Big other-Big2",
          "sh", dir);
      Path config = TestConfig.watching(shm.path(), "0s");

      CliRun scan = CliRun.of("scan", "--json", "-c", config.toString());
      CliRun text = CliRun.of("scan", "-c", config.toString());
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(scan.status()).as(scan.err()).isZero();
      assertThat(scan.out()).as("no sum overflowed into a negative figure").doesNotContainPattern("\":-\\d");
      System.out.println(text.out());
      assertThat(text.status()).as(text.err()).isZero();
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leak).doesNotExist();
    }
  }
}
