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
    // Every user process maps something (its executable at least); an empty maps is a zombie.
    Files.writeString(root.resolve("proc/10/maps"), "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567   /usr/bin/python3\n");
    Path p11 = Files.createDirectories(root.resolve("proc/11/fd"));
    Files.writeString(root.resolve("proc/11/maps"),
        "7f0000000000-7f0000001000 rw-s 00000000 " + devHex + " " + st.ino() + "   /dev/shm/nccl-Fixtur\n");
    Files.createDirectories(root.resolve("proc/12")); // vanished mid-pass: no maps, no fd
    Files.createDirectories(root.resolve("proc/13/fd"));
    Files.writeString(root.resolve("proc/13/maps"), ""); // a zombie: no address space, holds nothing
    Files.createDirectories(root.resolve("proc/self"));

    HolderPass pass = new HolderScanner(HostPaths.of(root.toString())).scan(java.util.List.of(dev));

    assertThat(pass.complete()).isTrue();
    assertThat(pass.processes()).isEqualTo(4);
    assertThat(pass.vanished()).isEqualTo(1);
    assertThat(pass.livePids().stream().boxed().toList()).containsExactly(10, 11);
    assertThat(pass.index().holders(new FileKey(dev, st.ino())))
        .extracting(HolderRef::pid, HolderRef::access)
        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(10, Access.FD), org.assertj.core.groups.Tuple.tuple(11, Access.MAP));
  }
}
