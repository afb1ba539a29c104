package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * What the observe stage's speed-ups (docs/performance.md) must not change: a maps file larger than
 * the reused read buffer is read to its end, and remembered holder details are dropped when a pid
 * is reused by another process or its command changes. Fixture trees as the host root; no root needed.
 */
class ObserveFastPathTest {

  @Test
  void mappingAtTheEndOfAMapsFileLargerThanTheBufferIsFound(@TempDir Path root) throws IOException {
    Path seg = Files.write(Files.createDirectories(root.resolve("data")).resolve("nccl-BigMap"), new byte[10]);
    StatxResult st = Linux.get().stat(seg.toString());
    Dev dev = Dev.of(st.devMajor(), st.devMinor());
    StringBuilder maps = new StringBuilder();
    while (maps.length() < 300_000) { // several times the 64 KiB buffer
      maps.append("7f0000000000-7f0000001000 r-xp 00000000 fd:01 4242   /usr/lib/libfoo.so\n");
    }
    maps.append(String.format("7f1000000000-7f1000004000 rw-s 00000000 %02x:%02x %d   /dev/shm/nccl-BigMap%n",
        dev.major(), dev.minor(), st.ino()));
    Files.createDirectories(root.resolve("proc/20/fd"));
    Files.writeString(root.resolve("proc/20/maps"), maps);

    HolderPass pass = new HolderScanner(HostPaths.of(root.toString())).scan(List.of(dev));

    assertThat(pass.complete()).isTrue();
    assertThat(pass.index().holders(new FileKey(dev, st.ino())))
        .extracting(HolderRef::pid, HolderRef::access, HolderRef::path, HolderRef::bytes)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(20, Access.MAP, "/dev/shm/nccl-BigMap", 0x4000L));
  }

  @Test
  void holderDetailsAreReadAgainWhenThePidIsReusedOrExecs(@TempDir Path root) throws IOException {
    HostPaths paths = HostPaths.of(root.toString());
    ProcessDetails details = new ProcessDetails(paths);
    writeProcess(root, 30, "python3", 1000, 111, "0::/system.slice/docker-" + "a".repeat(64) + ".scope\n");

    ProcessInfo first = details.read(30);
    assertThat(first.command()).isEqualTo("python3");
    assertThat(first.uid()).isEqualTo(1000);
    assertThat(first.container()).isEqualTo("docker:aaaaaaaaaaaa");

    // Another process now has pid 30: a later start time.
    writeProcess(root, 30, "python3", 2000, 222, "0::/user.slice\n");
    ProcessInfo reused = details.read(30);
    assertThat(reused.uid()).isEqualTo(2000);
    assertThat(reused.container()).isNull();
    assertThat(reused.startTicks()).isEqualTo(222);

    // The same process after exec: same start time, another command.
    writeProcess(root, 30, "torchrun", 3000, 222, "0::/user.slice\n");
    assertThat(details.read(30)).extracting(ProcessInfo::command, ProcessInfo::uid).containsExactly("torchrun", 3000);

    // Gone.
    Files.delete(root.resolve("proc/30/stat"));
    assertThat(details.read(30)).isNull();
  }

  private static void writeProcess(Path root, int pid, String comm, int uid, long startTicks, String cgroup)
      throws IOException {
    Path dir = Files.createDirectories(root.resolve("proc").resolve(Integer.toString(pid)));
    // Fields 3 to 21 before the start time (field 22).
    Files.writeString(dir.resolve("stat"), pid + " (" + comm + ") S 1 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
        + startTicks + " 1000000 100 0\n");
    Files.writeString(dir.resolve("status"), "Name:\t" + comm + "\nUmask:\t0022\nUid:\t" + uid + "\t" + uid + "\t" + uid
        + "\t" + uid + "\nGid:\t0\t0\t0\t0\n");
    Files.writeString(dir.resolve("cgroup"), cgroup);
    Files.writeString(dir.resolve("comm"), comm + "\n");
  }
}
