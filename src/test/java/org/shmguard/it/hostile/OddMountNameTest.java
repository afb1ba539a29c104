package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.FuseFixture;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * An ordinary user adds a mount to the host's own namespace with the setuid fusermount3, at a
 * directory whose name is not UTF-8 (byte 0xff). mountinfo escapes only space, tab, newline and
 * backslash, so the byte reaches shmguard as it is: the host's mounts must still be read, and a
 * leak on a watched tmpfs reaped.
 */
class OddMountNameTest {
  private static final String ODD = "\"$1/$(printf '\\377')\"";

  @Test
  void aUsersFuseMountAtANameThatIsNotUtf8LeavesEveryWatchedMountWatched() throws Exception {
    assumeThat(Path.of("/usr/bin/fusermount3")).as("needs fusermount3 (package fuse3)").exists();
    assumeThat(Path.of("/dev/fuse")).as("needs /dev/fuse").exists();
    Path fusefix = CProgram.build("fuse/fusefix.c", CProgram.pkgConfig("fuse3"));
    FuseFixture.openDevFuseToUsers();
    Path parent = Files.createDirectories(Sandbox.MOUNTS.resolve("odd-" + ProcessHandle.current().pid()));
    Cmd.run("chown", "65534:65534", parent.toString());
    List<String> cmd = new ArrayList<>(List.of(FuseFixture.NOBODY));
    cmd.addAll(List.of("sh", "-c", "mkdir " + ODD + " && exec \"$2\" serve " + ODD, "sh", parent.toString(),
        fusefix.toString()));
    Process server = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try (TmpfsMount watched = TmpfsMount.create("size=4m,mode=1777")) {
      String said = new String(server.getInputStream().readNBytes(6), StandardCharsets.UTF_8);
      assertThat(said).as("the user's FUSE server mounted").isEqualTo("ready\n");
      assertThat(Files.readAllBytes(Path.of("/proc/self/mountinfo"))).as("mountinfo shows the raw byte")
          .contains((byte) 0xff);
      Path leak = watched.createSegment("nccl-Leak03", 4_100);

      CliRun clean = CliRun.of("clean", "-c", TestConfig.watching(watched.path(), "0s").toString());

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leak).doesNotExist();
    } finally {
      Cmd.exec("sh", "-c", "umount -l " + ODD, "sh", parent.toString());
      server.destroyForcibly();
      server.waitFor(30, TimeUnit.SECONDS);
      Cmd.exec("sh", "-c", "rmdir " + ODD + " && rmdir \"$1\"", "sh", parent.toString());
    }
  }
}
