package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderRef;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * The /proc pass against a fixture tree given as the host root: fd entries are links to real
 * files (so stat through them works as in /proc), maps files are text. No root needed.
 */
class HolderScannerFixtureTest {

  @Test
  void fixtureProcIsReadByDeviceAndInodeWithVanishedPidsTolerated(@TempDir Path root) throws IOException {
    Path data = Files.createDirectories(root.resolve("data"));
    Path seg = Files.write(data.resolve("nccl-Fixtur"), new byte[100]);
    StatxResult st = Linux.get().stat(seg.toString());
    Dev dev = Dev.of(st.devMajor(), st.devMinor());
    String devHex = String.format("%02x:%02x", dev.major(), dev.minor());

    Path p10 = Files.createDirectories(root.resolve("proc/10/fd"));
    Files.createSymbolicLink(p10.resolve("3"), seg);
    Files.writeString(root.resolve("proc/10/maps"), "");
    Path p11 = Files.createDirectories(root.resolve("proc/11/fd"));
    Files.writeString(root.resolve("proc/11/maps"),
        "7f0000000000-7f0000001000 rw-s 00000000 " + devHex + " " + st.ino() + "   /dev/shm/nccl-Fixtur\n");
    Files.createDirectories(root.resolve("proc/12")); // vanished mid-pass: no maps, no fd
    Files.createDirectories(root.resolve("proc/self"));

    HolderPass pass = new HolderScanner(HostPaths.of(root.toString())).scan(java.util.List.of(dev));

    assertThat(pass.complete()).isTrue();
    assertThat(pass.processes()).isEqualTo(3);
    assertThat(pass.vanished()).isEqualTo(1);
    assertThat(pass.index().holders(new FileKey(dev, st.ino())))
        .extracting(HolderRef::pid, HolderRef::access)
        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(10, Access.FD), org.assertj.core.groups.Tuple.tuple(11, Access.MAP));
  }
}
