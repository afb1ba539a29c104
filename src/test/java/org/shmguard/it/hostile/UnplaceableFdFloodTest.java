package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * An fd on a mount that no mountinfo lists could be any watched file with its inode number. An
 * ordinary user can make such fds at will: in a user namespace of their own, a tmpfs with a few
 * hundred files kept open, then umount -l. Fresh tmpfs mounts hand out the same small inode
 * numbers, so were those fds holders, they would keep every other user's segment with one of those
 * numbers while the user's process lives. An open fd (not O_PATH) is left to the reap's write
 * lease, which sees only the file it really is.
 */
class UnplaceableFdFloodTest {
  /**
   * Each such fd is kept in the pass's index with its link text, whatever its inode number: two
   * processes with 18,000 fds each on a detached tmpfs, in a directory whose path is nearly
   * PATH_MAX long, are about 140 MiB of paths. A clean under the unit's heap must still finish,
   * and reap a leak whose inode number none of them has: its judging pass and its confirming pass
   * both keep only the fds that could be a listed file.
   */
  @Test
  void thousandsOfAUsersFdsOnADetachedTmpfsDoNotEndACleanUnderTheUnitsHeap() throws Exception {
    Path bin = CProgram.build("redteam/detached-holder.c");
    List<Process> attackers = new java.util.ArrayList<>();
    try (TmpfsMount watched = TmpfsMount.create("size=8m,mode=1777");
        TmpfsMount workspace = TmpfsMount.create("size=1m,mode=1777")) {
      Path leak = watched.createSegment("nccl-Leak06", 4_100);
      try {
        for (int i = 0; i < 2; i++) {
          Process a = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
              "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", bin.toString(),
              workspace.path().toString(), "18000", "deep").redirectErrorStream(true).start();
          attackers.add(a);
          assertThat(new String(a.getInputStream().readNBytes(6))).isEqualTo("ready\n");
        }

        HugeProcFilesTest.Result r = HugeProcFilesTest.cleanUnderTheUnitsHeap(TestConfig.watching(watched.path(), "0s"));

        assertThat(r.status()).as(r.err()).isZero();
        assertThat(leak).as("reaped: its inode number is none of the fds' (they skip the first 1,000)").doesNotExist();
      } finally {
        for (Process a : attackers) {
          a.destroyForcibly();
          a.waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }

  @Test
  void aUsersFdsOnADetachedTmpfsDoNotKeepAnotherUsersLeaks() throws Exception {
    Path bin = CProgram.build("redteam/detached-holder.c");
    try (TmpfsMount watched = TmpfsMount.create("size=8m,mode=1777");
        TmpfsMount workspace = TmpfsMount.create("size=1m,mode=1777")) {
      Path leak = watched.createSegment("nccl-Leak04", 4_100);
      Process attacker = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
          "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private", bin.toString(),
          workspace.path().toString(), "500").redirectErrorStream(true).start();
      try {
        assertThat(new String(attacker.getInputStream().readNBytes(6))).isEqualTo("ready\n");
        Path config = TestConfig.watching(watched.path(), "0s");

        JsonNode scan = CliRun.scanJson(config);
        CliRun clean = CliRun.of("clean", "-c", config.toString());

        assertThat(clean.status()).as(clean.err()).isZero();
        assertThat(leak).as("the leak, after clean; scan said: " + scan).doesNotExist();
      } finally {
        attacker.destroyForcibly();
        attacker.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
