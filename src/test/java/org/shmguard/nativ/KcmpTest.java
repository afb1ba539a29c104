package org.shmguard.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/** kcmp(2) KCMP_FILES through ProcCalls, on real threads: the syscall number and what it answers. */
class KcmpTest {

  @Test
  void threadsOfPthreadCreateShareTheTableAndACloneWithoutCloneFilesDoesNot() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Path seg = shm.createSegment("nccl-Kcmp01", 4_100);
      try (ThreadHolder shared = ThreadHolder.start("exit-main-fd", seg);
          ThreadHolder own = ThreadHolder.start("clone-fd", seg)) {
        assertThat(ProcCalls.sameFdTable(shared.pid(), otherThread(shared.pid()))).isZero();
        assertThat(ProcCalls.sameFdTable(own.pid(), otherThread(own.pid()))).isPositive();
        assertThat(ProcCalls.sameFdTable(own.pid(), own.pid())).isZero();
      }
    }
  }

  private static int otherThread(int pid) throws IOException {
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Integer.toString(pid), "task"))) {
      return tasks.mapToInt(t -> Integer.parseInt(t.getFileName().toString())).filter(t -> t != pid).findFirst()
          .orElseThrow(() -> new AssertionError("pid " + pid + " has one thread"));
    }
  }
}
