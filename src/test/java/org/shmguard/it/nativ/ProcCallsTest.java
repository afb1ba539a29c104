package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.ProcCalls;
import org.shmguard.nativ.StatxResult;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * The /proc pass's system calls on a real /proc, real processes and a real tmpfs: what each call
 * answers for a live process, for one that has gone, and for files made line by line (kcmp(2)
 * KCMP_FILES on real threads included).
 */
class ProcCallsTest {

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

  @Test
  void pidsAreTheProcessesOfThisPidNamespaceAscending() throws Exception {
    Process sleeper = sleeper();
    try (ProcCalls proc = ProcCalls.open("/proc")) {
      int[] pids = proc.pids();

      assertThat(pids).contains((int) sleeper.pid(), (int) ProcessHandle.current().pid());
      assertThat(pids).isSorted();
      int[] tids = proc.tids((int) sleeper.pid());
      assertThat(tids).containsExactly((int) sleeper.pid());
      assertThat(proc.threadCount((int) sleeper.pid())).isEqualTo(1);
    } finally {
      end(sleeper);
    }
  }

  @Test
  void aProcessThatHasGoneAnswersAnErrnoNotAnException() throws Exception {
    Process sleeper = sleeper();
    int pid = (int) sleeper.pid();
    end(sleeper);
    try (ProcCalls proc = ProcCalls.open("/proc")) {
      assertThat(proc.readFile(pid, "maps")).isIn(-ProcCalls.ENOENT, -ProcCalls.ESRCH);
      assertThat(proc.tids(pid)).isNull();
      assertThat(proc.lastErrno()).isIn(ProcCalls.ENOENT, ProcCalls.ESRCH);
      assertThat(proc.threadCount(pid)).isEqualTo(-ProcCalls.ENOENT);
      assertThat(proc.namespaceInode(pid, "mnt")).isEqualTo(-ProcCalls.ENOENT);
      assertThat(proc.readLink(pid, "exe")).isNull();
      assertThat(proc.openDir(pid + "/fd")).isEqualTo(-ProcCalls.ENOENT);
    }
  }

  @Test
  void anOpenFdIsListedLinkedAndStatedAsTheFileItHolds() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m"); ProcCalls proc = ProcCalls.open("/proc")) {
      Path seg = shm.createSegment("nccl-ProcCalls1", 12_288);
      try (Holder h = Holder.start("fd", seg.toString())) {
        int dir = proc.openDir(h.pid() + "/fd");
        assertThat(dir).isNotNegative();
        try {
          int[][] fds = {new int[1]};
          int n = proc.fdNumbers(dir, fds);
          assertThat(n).isPositive();
          List<Integer> onSegment = new ArrayList<>();
          for (int fd : Arrays.copyOf(fds[0], n)) {
            if (proc.fdLink(dir, fd) > 0 && proc.linkStartsWithSlash() && proc.linkText().equals(seg.toString())) {
              onSegment.add(fd);
            }
          }
          assertThat(onSegment).hasSize(1);

          assertThat(proc.statFd(dir, onSegment.get(0))).isZero();
          StatxResult st = Linux.get().stat(seg.toString());
          assertThat(proc.ino()).isEqualTo(st.ino());
          assertThat(proc.size()).isEqualTo(12_288);
          assertThat(proc.devMajor()).isEqualTo(st.devMajor());
          assertThat(proc.devMinor()).isEqualTo(st.devMinor());
        } finally {
          proc.closeFd(dir);
        }
      }
    }
  }

  @Test
  void linksAndFilesReadAsProcShowsThem() throws Exception {
    Process sleeper = sleeper();
    int pid = (int) sleeper.pid();
    try (ProcCalls proc = ProcCalls.open("/proc")) {
      String mnt = Files.readSymbolicLink(Path.of("/proc", Integer.toString(pid), "ns", "mnt")).toString();
      assertThat(proc.namespaceInode(pid, "mnt")).isEqualTo(Long.parseLong(mnt.replaceAll("\\D", "")));
      assertThat(proc.readLink(pid + "/ns/mnt")).isEqualTo(mnt);
      assertThat(proc.readLink(pid, "exe")).isEqualTo(Files.readSymbolicLink(Path.of("/proc", Integer.toString(pid), "exe"))
          .toString());

      int n = proc.readWholeRecordFile(pid, "stat");
      assertThat(new String(proc.bytes(), 0, n, StandardCharsets.US_ASCII)).startsWith(pid + " (sleep) ");
      n = proc.readFile(pid, "cmdline");
      assertThat(new String(proc.bytes(), 0, n, StandardCharsets.US_ASCII)).isEqualTo("sleep\0" + "600\0");
    } finally {
      end(sleeper);
    }
  }

  @Test
  void aFileReadByLinesArrivesAsWholeLinesWhateverTheirLengths(@TempDir Path dir) throws IOException {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 3_000; i++) {
      text.append("line ").append(i).append(' ').append("x".repeat(i * 37 % 5_000)).append('\n');
    }
    text.append("last line without a newline");
    Files.writeString(dir.resolve("lines"), text);

    ByteArrayOutputStream got = new ByteArrayOutputStream();
    List<Boolean> wholeLines = new ArrayList<>();
    try (ProcCalls calls = ProcCalls.open(dir.toString())) {
      int n = calls.readLines("lines", (b, length) -> {
        got.write(b, 0, length);
        wholeLines.add(b[length - 1] == '\n');
      });

      assertThat(n).isEqualTo(text.length());
    }
    assertThat(got.toString(StandardCharsets.US_ASCII)).isEqualTo(text.toString());
    assertThat(wholeLines.subList(0, wholeLines.size() - 1)).isNotEmpty().containsOnly(true);
  }

  @Test
  void aLineLongerThanAnyProcFileWritesIsRefused(@TempDir Path dir) throws IOException {
    Files.writeString(dir.resolve("long"), "short\n" + "y".repeat(ProcCalls.MAX_LINE + 1) + "\n");
    List<String> lines = new ArrayList<>();
    try (ProcCalls calls = ProcCalls.open(dir.toString())) {
      assertThat(calls.readLines("long", (b, length) -> lines.add(new String(b, 0, length, StandardCharsets.US_ASCII))))
          .isEqualTo(-ProcCalls.E2BIG);
      assertThat(calls.readLines("missing", (b, length) -> lines.add("?"))).isEqualTo(-ProcCalls.ENOENT);
    }
    assertThat(lines).containsExactly("short\n");
  }

  @Test
  void theMemfdMountIsTheOneAnotherProcessesMemfdShows() throws IOException {
    String other = Cmd.run("python3", "-c", "import os\nfd = os.memfd_create('x')\nst = os.fstat(fd)\n"
        + "mnt = [l.split()[1] for l in open('/proc/self/fdinfo/%d' % fd) if l.startswith('mnt_id:')][0]\n"
        + "print(mnt, os.major(st.st_dev), os.minor(st.st_dev))").strip();
    try (ProcCalls proc = ProcCalls.open("/proc")) {
      int[] memfd = proc.memfdMount();

      assertThat(memfd).isNotNull();
      assertThat(memfd[0] + " " + memfd[1] + " " + memfd[2]).isEqualTo(other);
    }
  }

  private static Process sleeper() throws IOException {
    Sandbox.require();
    return new ProcessBuilder("sleep", "600").start();
  }

  private static void end(Process p) throws InterruptedException {
    p.destroyForcibly();
    p.waitFor(10, TimeUnit.SECONDS);
  }

  private static int otherThread(int pid) throws IOException {
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Integer.toString(pid), "task"))) {
      return tasks.mapToInt(t -> Integer.parseInt(t.getFileName().toString())).filter(t -> t != pid).findFirst()
          .orElseThrow(() -> new AssertionError("pid " + pid + " has one thread"));
    }
  }
}
