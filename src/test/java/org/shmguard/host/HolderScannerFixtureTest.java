package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

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
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * The /proc pass against a fixture tree given as the host root: fd entries are links (to real
 * files, or to texts such as "socket:[7]" as the kernel writes them), fdinfo and mountinfo are
 * text, as are maps. No root needed.
 */
class HolderScannerFixtureTest {
  private static final int WATCHED_MOUNT = 77;
  private static final int OTHER_MOUNT = 78;

  @TempDir Path root;
  private Path seg;
  private Dev dev;
  private long ino;

  private void segment() throws IOException {
    Path data = Files.createDirectories(root.resolve("data"));
    seg = Files.write(data.resolve("nccl-Fixtur"), new byte[100]);
    StatxResult st = Linux.get().stat(seg.toString());
    dev = Dev.of(st.devMajor(), st.devMinor());
    ino = st.ino();
  }

  /** A process (or task, "PID/task/TID") whose namespace lists the watched mount and one other. */
  private Path task(String task, String maps) throws IOException {
    Path dir = Files.createDirectories(root.resolve("proc").resolve(task));
    Files.createDirectories(dir.resolve("fd"));
    Files.createDirectories(dir.resolve("fdinfo"));
    Files.createDirectories(dir.resolve("ns"));
    Files.createSymbolicLink(dir.resolve("ns/mnt"), Path.of("mnt:[4026531841]"));
    Files.writeString(dir.resolve("mountinfo"),
        WATCHED_MOUNT + " 1 " + dev.major() + ":" + dev.minor() + " / /data rw - tmpfs tmpfs rw\n"
            + OTHER_MOUNT + " 1 0:4242 / /fuse rw,nosuid,nodev - fuse.hello hello rw,user_id=65534\n");
    Files.writeString(dir.resolve("maps"), maps);
    return dir;
  }

  private static void fd(Path task, int fd, String target, int mntId, long ino) throws IOException {
    fd(task, fd, target, mntId, ino, "02100002"); // O_RDWR|O_NOFOLLOW|O_CLOEXEC, as the kernel writes it
  }

  private static void fd(Path task, int fd, String target, int mntId, long ino, String octalFlags) throws IOException {
    Files.createSymbolicLink(task.resolve("fd").resolve(Integer.toString(fd)), Path.of(target));
    Files.writeString(task.resolve("fdinfo").resolve(Integer.toString(fd)),
        "pos:\t0\nflags:\t" + octalFlags + "\nmnt_id:\t" + mntId + "\nino:\t" + ino + "\n");
  }

  private HolderPass scan() {
    return new HolderScanner(HostPaths.of(root.toString())).scan(List.of(dev));
  }

  // Every user process maps something (its executable at least); an empty maps is a zombie.
  private static final String EXE = "55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1234567   /usr/bin/python3\n";

  @Test
  void fixtureProcIsReadByDeviceAndInodeWithVanishedPidsTolerated() throws IOException {
    segment();
    fd(task("10", EXE), 3, seg.toString(), WATCHED_MOUNT, ino);
    task("11", "7f0000000000-7f0000001000 rw-s 00000000 " + String.format("%02x:%02x", dev.major(), dev.minor())
        + " " + ino + "   /dev/shm/nccl-Fixtur\n");
    Files.createDirectories(root.resolve("proc/12")); // vanished mid-pass: no maps, no fd
    task("13", ""); // a zombie: no address space, holds nothing
    Files.createDirectories(root.resolve("proc/self"));

    HolderPass pass = scan();

    assertThat(pass.complete()).isTrue();
    assertThat(pass.processes()).isEqualTo(4);
    assertThat(pass.vanished()).isEqualTo(1);
    assertThat(pass.livePids().stream().boxed().toList()).containsExactly(10, 11);
    assertThat(pass.index().holders(new FileKey(dev, ino)))
        .extracting(HolderRef::pid, HolderRef::access, HolderRef::bytes)
        .containsExactlyInAnyOrder(tuple(10, Access.FD, 100L), tuple(11, Access.MAP, 4096L));
  }

  @Test
  void fdsOnOtherFilesystemsAreNeverStatedAndSocketsAreSkipped() throws IOException {
    segment();
    Path p = task("20", EXE);
    // A file on a FUSE mount: the link leads nowhere here, so a stat through it would fail.
    fd(p, 3, "/fuse/denied/file", OTHER_MOUNT, 2);
    fd(p, 4, "socket:[12345]", 9, 12345);
    fd(p, 5, seg.toString(), WATCHED_MOUNT, ino);

    HolderPass pass = scan();

    assertThat(pass.complete()).as(pass.problems().toString()).isTrue();
    assertThat(pass.index().holders(new FileKey(dev, ino))).extracting(HolderRef::pid).containsExactly(20);
    assertThat(pass.index().unresolvedCount()).isZero();
  }

  @Test
  void oPathFdOnAMountNoMountinfoListsHoldsEveryWatchedFileWithItsInodeNumber() throws IOException {
    segment();
    fd(task("30", EXE), 3, "/detached/nccl-Fixtur", 999, ino, "012100000"); // O_PATH|O_NOFOLLOW|O_CLOEXEC
    Files.createDirectories(root.resolve("proc/self"));

    HolderPass pass = scan();

    assertThat(pass.complete()).isTrue();
    assertThat(pass.index().holders(new FileKey(dev, ino)))
        .extracting(HolderRef::pid, HolderRef::access)
        .containsExactly(tuple(30, Access.FD_UNRESOLVED));
    assertThat(pass.index().holders(new FileKey(dev, ino + 1))).isEmpty();
    assertThat(pass.livePids().get(30)).isTrue();
  }

  @Test
  void openFileOnAMountNoMountinfoListsHoldsNothingAndIsOnlyAHintForTheLease() throws IOException {
    segment();
    fd(task("31", EXE), 3, "/detached/nccl-Fixtur", 999, ino);
    fd(task("32", EXE), 4, "/detached/other", 999, ino, "0100000"); // O_RDONLY|O_LARGEFILE
    Files.createDirectories(root.resolve("proc/self"));

    HolderPass pass = scan();

    assertThat(pass.complete()).isTrue();
    assertThat(pass.index().holders(new FileKey(dev, ino))).isEmpty();
    assertThat(pass.index().hints(ino)).extracting(HolderRef::pid).containsExactlyInAnyOrder(31, 32);
    assertThat(pass.livePids().get(31)).isTrue();
  }

  @Test
  void processWhoseMainThreadExitedIsReadThroughALiveThread() throws IOException {
    segment();
    task("40", ""); // the leader exited: its maps and fd table are empty
    fd(task("40/task/41", EXE), 7, seg.toString(), WATCHED_MOUNT, ino);
    Files.createDirectories(root.resolve("proc/40/task/40"));

    HolderPass pass = scan();

    assertThat(pass.complete()).isTrue();
    assertThat(pass.livePids().get(40)).isTrue();
    assertThat(pass.index().holders(new FileKey(dev, ino)))
        .extracting(HolderRef::pid, HolderRef::access)
        .containsExactly(tuple(40, Access.FD));
  }

  @Test
  void threadWithItsOwnFdTableIsRead() throws IOException {
    segment();
    task("50", EXE);
    Files.createDirectories(root.resolve("proc/50/task/50"));
    fd(task("50/task/51", EXE), 4, seg.toString(), WATCHED_MOUNT, ino);

    HolderPass pass = scan();

    assertThat(pass.index().holders(new FileKey(dev, ino))).extracting(HolderRef::pid).containsExactly(50);
  }
}
