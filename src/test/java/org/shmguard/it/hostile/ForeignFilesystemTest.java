package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * An fd on a filesystem that is not a watched tmpfs never makes the /proc pass incomplete, even
 * where root may not stat it: a FUSE filesystem of uid 65534 mounted without allow_other
 * (src/test/resources/holders/hello-fs.c, libfuse3), with a process of that user holding its file
 * and its root directory open.
 */
class ForeignFilesystemTest {
  private static final String[] NOBODY = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};

  @Test
  void fdOnAFuseMountRootMayNotStatNeverBlocksReaping() throws Exception {
    Sandbox.require();
    assumeThat(Path.of("/dev/fuse")).as("needs /dev/fuse").exists();
    Path fs = CProgram.build("holders/hello-fs.c", CProgram.pkgConfig("fuse3"));
    Path mnt = Files.createDirectories(Sandbox.MOUNTS.resolve("fuse-" + ProcessHandle.current().pid()));
    Cmd.run("chown", "65534:65534", mnt.toString());
    Process fuse = null;
    Process holder = null;
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path leaked = shm.createSegment("nccl-Fuse01", 4_100);
      // Root opens /dev/fuse and mounts with user_id=65534 (as fusermount3 does for that user,
      // which this host's 0600 /dev/fuse would refuse it); the filesystem runs as 65534.
      fuse = new ProcessBuilder("sh", "-c",
          "exec 5<>/dev/fuse; mount -i -t fuse -o fd=5,rootmode=40000,user_id=65534,group_id=65534 shmguard-hello \"$0\""
              + " && exec " + String.join(" ", NOBODY) + " \"$1\" -f /dev/fd/5",
          mnt.toString(), fs.toString()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      Eventually.until("the FUSE mount", Duration.ofSeconds(30), () -> mounted(mnt));
      Path file = mnt.resolve("hello");
      List<String> hold = new ArrayList<>(List.of(NOBODY));
      hold.addAll(List.of("sh", "-c", "exec 3<\"$0\" 4<\"$1\"; echo ready; exec sleep 600", file.toString(), mnt.toString()));
      holder = new ProcessBuilder(hold).redirectErrorStream(true).start();
      String said = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8)).readLine();
      assertThat(said).isEqualTo("ready");
      assertThatThrownBy(() -> Files.readAttributes(file, "unix:ino")).as("root may not stat the user's FUSE file")
          .isInstanceOf(AccessDeniedException.class);
      Path config = TestConfig.watching(shm.path(), "0s");

      JsonNode scan = CliRun.scanJson(config);
      CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());

      assertThat(scan.get("pass").get("complete").asBoolean()).as(scan.get("pass").toString()).isTrue();
      assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
      assertThat(clean.json().get("actions").get(0).get("result").asText()).isEqualTo("reaped");
      assertThat(leaked).doesNotExist();
    } finally {
      if (holder != null) {
        holder.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      Cmd.exec("umount", "-l", mnt.toString()); // the filesystem process exits when its mount goes
      if (fuse != null && !fuse.waitFor(30, TimeUnit.SECONDS)) {
        fuse.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(mnt);
    }
  }

  private static boolean mounted(Path mnt) {
    try {
      return Files.readString(Path.of("/proc/self/mountinfo")).contains(" " + mnt + " ");
    } catch (IOException e) {
      return false;
    }
  }
}
