package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.HolderPass;
import org.shmguard.host.HolderScanner;
import org.shmguard.host.HostPaths;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * A holder whose fd is on a mount no mountinfo lists (a bind of the watched tmpfs, detached with
 * umount -l after the open): its device cannot be told from /proc without a stat, so the pass
 * (which stays complete) keeps it only as a hint; the reap's write lease, which the open fd makes
 * the kernel refuse, keeps the file, and the reason names the hint. A memfd, whose mount is the
 * kernel's own, is placed and holds nothing watched.
 */
class DetachedMountHolderTest {

  @Test
  void fdThroughADetachedMountKeepsTheSegmentThroughTheLease() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Detach", 9_637_892);
      Path bind = Files.createDirectories(Sandbox.MOUNTS.resolve("bind-" + ProcessHandle.current().pid()));
      Path config = TestConfig.watching(shm.path(), "0s");
      Cmd.run("mount", "--bind", shm.path().toString(), bind.toString());
      try (ThreadHolder holder = ThreadHolder.start("fd", bind.resolve(seg.getFileName()))) {
        Cmd.run("umount", "-l", bind.toString());

        JsonNode scan = CliRun.scanJson(config);
        CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());

        assertThat(scan.get("pass").get("complete").asBoolean()).isTrue();
        assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
        JsonNode action = clean.json().get("actions").get(0);
        assertThat(action.get("result").asText()).as(clean.out()).isEqualTo("skipped");
        assertThat(action.toString()).contains("an fd on a mount not in mountinfo, pid " + holder.pid() + ", may be it");
        assertThat(seg).exists();
        assertThat(holder.nlink()).isEqualTo(1);
      } finally {
        Cmd.exec("umount", "-l", bind.toString());
        Files.deleteIfExists(bind);
      }

      CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());

      assertThat(clean.json().get("actions").get(0).get("result").asText()).isEqualTo("reaped");
      assertThat(seg).doesNotExist();
    }
  }

  @Test
  void memfdIsPlacedOnTheKernelsOwnMountAndHoldsNoWatchedFile() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777");
        ThreadHolder holder = ThreadHolder.start("memfd", Path.of("nccl-Memfd1"))) {
      HolderPass pass = new HolderScanner(HostPaths.system()).scan(List.of(shm.dev()));

      assertThat(pass.complete()).isTrue();
      assertThat(pass.index().unresolvedCount()).isZero();
      assertThat(pass.index().pids()).doesNotContain(holder.pid());
      assertThat(pass.livePids().get(holder.pid())).isTrue();
    }
  }
}
