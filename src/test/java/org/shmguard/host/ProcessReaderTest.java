package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Access;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.ProcCalls;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * One process read through /proc for what it holds on a watched tmpfs: an fd, a mapping of an
 * unlinked file, a thread's own fd table, a process whose main thread has exited; and what a
 * zombie and a process that has gone answer. Real processes on a real tmpfs.
 */
class ProcessReaderTest {

  @Test
  void anOpenFdAndAMappingOfAnUnlinkedFileAreRecordedWithTheirAccess() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Path fd = shm.createSegment("nccl-Reader-fd", 4_100);
      Path map = shm.createSegment("nccl-Reader-map", 8_192);
      FileKey fdKey = key(fd);
      FileKey mapKey = key(map);
      try (Holder h = Holder.start("fd", fd.toString(), "map-unlink", map.toString())) {
        HolderIndex.Builder index = HolderIndex.builder();

        assertThat(read(shm, index, h.pid())).isEqualTo(ProcessReader.Outcome.LIVE);

        HolderIndex held = index.build();
        assertThat(held.holders(fdKey)).extracting(HolderRef::pid, HolderRef::access, HolderRef::path, HolderRef::deleted)
            .containsExactly(org.assertj.core.groups.Tuple.tuple(h.pid(), Access.FD, fd.toString(), false));
        assertThat(held.holders(mapKey)).isNotEmpty().allSatisfy(r -> {
          assertThat(r.pid()).isEqualTo(h.pid());
          assertThat(r.access()).isEqualTo(Access.MAP);
          assertThat(r.deleted()).isTrue();
        });
        assertThat(held.pids()).containsExactly(h.pid());
      }
    }
  }

  @Test
  void aThreadsOwnFdTableAndAProcessWhoseMainThreadExitedStillHold() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Path own = shm.createSegment("nccl-Reader-clone", 4_100);
      Path orphan = shm.createSegment("nccl-Reader-exit", 4_100);
      try (ThreadHolder cloned = ThreadHolder.start("clone-fd", own);
          ThreadHolder leaderGone = ThreadHolder.start("exit-main-fd", orphan)) {
        leaderGone.exitMainThread();
        HolderIndex.Builder index = HolderIndex.builder();

        assertThat(read(shm, index, cloned.pid())).isEqualTo(ProcessReader.Outcome.LIVE);
        assertThat(read(shm, index, leaderGone.pid())).isEqualTo(ProcessReader.Outcome.LIVE);

        HolderIndex held = index.build();
        assertThat(held.holders(key(own))).extracting(HolderRef::pid).contains(cloned.pid());
        assertThat(held.holders(key(orphan))).extracting(HolderRef::pid).contains(leaderGone.pid());
      }
    }
  }

  @Test
  void aZombieHoldsNothingAndAProcessThatHasGoneVanished() throws Exception {
    Sandbox.require();
    // sh forks a child that exits soon after sh has become sleep, which never reaps it: a zombie.
    Process parent = new ProcessBuilder("sh", "-c", "sleep 0.2 & echo $!; exec sleep 600").start();
    Process gone = new ProcessBuilder("true").start();
    gone.waitFor(10, TimeUnit.SECONDS);
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      // one line: sleep keeps the pipe open, so nothing more is read than that line
      int zombie = Integer.parseInt(new java.io.BufferedReader(new java.io.InputStreamReader(parent.getInputStream(),
          StandardCharsets.US_ASCII)).readLine().strip());
      org.shmguard.testing.Eventually.until("pid " + zombie + " is a zombie", java.time.Duration.ofSeconds(10),
          () -> state(zombie).equals("Z"));
      HolderIndex.Builder index = HolderIndex.builder();

      assertThat(read(shm, index, zombie)).isEqualTo(ProcessReader.Outcome.HOLDS_NOTHING);
      assertThat(read(shm, index, (int) gone.pid())).isEqualTo(ProcessReader.Outcome.VANISHED);
      assertThat(index.build().pids()).isEmpty();
    } finally {
      parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static ProcessReader.Outcome read(TmpfsMount shm, HolderIndex.Builder index, int pid) throws IOException {
    try (ProcCalls proc = ProcCalls.open("/proc")) {
      long[] wanted = HolderScanner.encode(List.of(shm.dev()));
      return new ProcessReader(proc, HostPaths.system(), wanted, null, index, new MountIds(wanted), proc.pids()).read(pid);
    }
  }

  private static FileKey key(Path file) throws IOException {
    var st = Linux.get().stat(file.toString());
    return new FileKey(org.shmguard.model.Dev.of(st.devMajor(), st.devMinor()), st.ino());
  }

  private static String state(int pid) {
    try {
      String stat = java.nio.file.Files.readString(Path.of("/proc", Integer.toString(pid), "stat"));
      return stat.substring(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    } catch (IOException e) {
      return "gone";
    }
  }
}
