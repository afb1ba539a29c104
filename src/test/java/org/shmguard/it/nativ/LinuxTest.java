package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.ErrnoException;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.OpenFile;
import org.shmguard.nativ.StatxResult;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TmpfsMount;

/**
 * The file system calls segments are read and unlinked through, on a real tmpfs: a directory
 * handle that follows no link, stat and statvfs, every name of a large directory (bytes that are
 * not UTF-8 included), opening without following or blocking, the two renames and the unlink.
 */
class LinuxTest {
  private static final Linux LINUX = Linux.get();

  @Test
  void aDirectoryIsOpenedOnlyWhereNoLinkLeadsAndStatFollowsLinks() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Files.createSymbolicLink(shm.file("link"), shm.path());
      Files.writeString(shm.file("file"), "12345");

      assertThatThrownBy(() -> LINUX.openDirectory(shm.file("link").toString())).isInstanceOf(ErrnoException.class)
          .hasMessageStartingWith("open " + shm.file("link") + ": ");
      assertThatThrownBy(() -> LINUX.openDirectory(shm.file("none").toString())).isInstanceOf(NoSuchFileException.class);
      assertThat(LINUX.stat(shm.file("link").toString()).isDirectory()).isTrue();
      StatxResult file = LINUX.stat(shm.file("file").toString());
      assertThat(file.isRegularFile()).isTrue();
      assertThat(file.size()).isEqualTo(5);
      assertThat(file.devMajor()).isEqualTo(shm.dev().major());
      assertThat(file.devMinor()).isEqualTo(shm.dev().minor());
      try (DirHandle dir = LINUX.openDirectory(shm.path().toString())) {
        assertThat(dir.lstat(bytes("link")).isSymlink()).isTrue();
        assertThat(dir.lstat(bytes("file")).ino()).isEqualTo(file.ino());
        assertThat(dir.self().ino()).isEqualTo(LINUX.stat(shm.path().toString()).ino());
      }
    }
  }

  @Test
  void statvfsGivesTheTmpfsSizeAndItsInodes() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=2m,nr_inodes=100")) {
      shm.createSegment("nccl-Statvfs", 64 * 1024);
      FsUsage u = LINUX.statvfs(shm.path().toString());
      assertThat(u.sizeBytes()).isEqualTo(2L << 20);
      assertThat(u.sizeBytes() - u.freeBytes()).isEqualTo(64 * 1024);
      assertThat(u.inodes()).isEqualTo(100);
      assertThat(u.inodes() - u.freeInodes()).isEqualTo(2); // the root and the file
      assertThat(u.readOnly()).isFalse();
    }
  }

  @Test
  void everyNameOfALargeDirectoryIsListedOnceWithItsRawBytes() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=8m")) {
      for (int i = 0; i < 3_000; i++) {
        Files.createFile(shm.file("nccl-" + "n".repeat(40) + i));
      }
      byte[] odd = {'n', 'c', 'c', 'l', '-', (byte) 0xff, (byte) 0xfe, '\n'};
      Cmd.run("python3", "-c", "import os,sys; open(os.fsencode(sys.argv[1]) + b'/nccl-\\xff\\xfe\\n', 'w')",
          shm.path().toString());
      List<byte[]> names = new ArrayList<>();
      try (DirHandle dir = LINUX.openDirectory(shm.path().toString())) {
        dir.forEachName(names::add);
        dir.forEachName(n -> names.add(null)); // a second listing starts again from the first name
      }
      assertThat(names).hasSize(2 * 3_001);
      List<byte[]> first = names.subList(0, 3_001);
      assertThat(first).noneMatch(n -> n == null);
      assertThat(first.stream().map(n -> new String(n, StandardCharsets.ISO_8859_1)).distinct()).hasSize(3_001)
          .doesNotContain(".", "..");
      assertThat(first).anyMatch(n -> java.util.Arrays.equals(n, odd));
      assertThat(org.shmguard.text.Names.display(odd)).isEqualTo("nccl-\\xff\\xfe\\x0a");
    }
  }

  @Test
  void anEntryIsOpenedWithoutFollowingALinkAndAFifoWithoutBlocking() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m"); DirHandle dir = LINUX.openDirectory(shm.path().toString())) {
      Files.writeString(shm.file("target"), "x");
      Files.createSymbolicLink(shm.file("link"), shm.file("target"));
      Cmd.run("mkfifo", shm.file("fifo").toString());

      try (OpenFile f = dir.open(bytes("target"))) {
        assertThat(f.stat().size()).isEqualTo(1);
      }
      assertThatThrownBy(() -> dir.open(bytes("link"))).isInstanceOfSatisfying(ErrnoException.class,
          e -> assertThat(e.isLink()).isTrue());
      try (OpenFile fifo = dir.open(bytes("fifo"))) {
        assertThat(fifo.stat().isRegularFile()).isFalse();
      }
    }
  }

  @Test
  void renamesReplaceNothingExchangeBothAndUnlinkRemoves() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m"); DirHandle dir = LINUX.openDirectory(shm.path().toString())) {
      Files.writeString(shm.file("a"), "A");
      Files.writeString(shm.file("b"), "B");

      assertThatThrownBy(() -> dir.renameNoReplace(bytes("a"), bytes("b"))).isInstanceOf(FileAlreadyExistsException.class);
      assertThat(Files.readString(shm.file("b"))).isEqualTo("B");
      dir.renameExchange(bytes("a"), bytes("b"));
      assertThat(Files.readString(shm.file("a"))).isEqualTo("B");
      assertThat(Files.readString(shm.file("b"))).isEqualTo("A");
      assertThatThrownBy(() -> dir.renameExchange(bytes("a"), bytes("c"))).isInstanceOf(NoSuchFileException.class);
      dir.renameNoReplace(bytes("a"), bytes("c"));
      dir.unlink(bytes("b"));

      assertThat(dir.lstatIfAny(bytes("b"))).isNull();
      try (var names = Files.list(shm.path())) {
        assertThat(names.map(p -> p.getFileName().toString())).containsExactly("c");
      }
    }
  }

  private static byte[] bytes(String name) {
    return name.getBytes(StandardCharsets.UTF_8);
  }
}
