package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.Segment;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.TmpfsMount;

/**
 * The lease protocol on a real tmpfs, with an opener made to race it at the worst moment: after the
 * rename, before the break check.
 */
class LeasedUnlinkTest {

  @Test
  void anOpenDuringTheSettleBreaksTheLeaseAndTheFileIsPutBackWhole() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      Path seg = shm.createSegment("nccl-Race01", 4_100);
      AtomicReference<Process> opener = new AtomicReference<>();
      LeasedUnlink lastCheck = new LeasedUnlink(new SecureRandom(), () -> {
        // The name is hidden now: open the hidden name, as a process that read the directory would,
        // and wait until that open is blocked on shmguard's lease.
        Path hidden = only(shm.path(), LeasedUnlink.HIDDEN_PREFIX);
        opener.set(start("sh", "-c", "exec 3< \"$1\" && stat -L -c %h /proc/self/fd/3", "sh", hidden.toString()));
        Eventually.until("the opener waits for the lease", Duration.ofSeconds(60), LeasedUnlinkTest::leaseBreaking);
        return false;
      });

      List<LeasedUnlink.Done> done = lastCheck.reap(dir, List.of(new LeasedUnlink.Job(segment(dir, shm, "nccl-Race01"),
          "test")), false);

      assertThat(done).singleElement().satisfies(d -> {
        assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(d.detail()).contains("an open raced the reap").contains("put back");
      });
      assertThat(seg).exists();
      Process p = opener.get();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim())
          .as("the opener's fd: nlink").isEqualTo("1");
      assertThat(hiddenNames(shm.path())).isEmpty();
    }
  }

  @Test
  void anUnheldFileIsUnlinkedAndNoHiddenNameIsLeft() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      Path seg = shm.createSegment("nccl-Free01", 4_100);

      List<LeasedUnlink.Done> done = new LeasedUnlink().reap(dir,
          List.of(new LeasedUnlink.Job(segment(dir, shm, "nccl-Free01"), "unheld")), false);

      assertThat(done).singleElement().isEqualTo(new LeasedUnlink.Done(ReapOutcome.Result.REAPED, "unheld"));
      assertThat(seg).doesNotExist();
      assertThat(hiddenNames(shm.path())).isEmpty();
    }
  }

  /** When the mounts of some namespace cannot be read, a bind mount of the file cannot be ruled out: kept. */
  @Test
  void aFileWhoseMountsCannotAllBeReadIsPutBackAndKept() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      Path seg = shm.createSegment("nccl-NoMnt1", 4_100);
      LeasedUnlink lastCheck = new LeasedUnlink(new SecureRandom(), () -> false, dev -> {
        throw new java.nio.file.AccessDeniedException("/proc/42/mountinfo");
      });

      List<LeasedUnlink.Done> done = lastCheck.reap(dir,
          List.of(new LeasedUnlink.Job(segment(dir, shm, "nccl-NoMnt1"), "unheld")), false);

      assertThat(done).singleElement().satisfies(d -> {
        assertThat(d.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(d.detail()).contains("cannot rule out that it is mounted elsewhere").contains("put back");
      });
      assertThat(seg).exists();
      assertThat(hiddenNames(shm.path())).isEmpty();
    }
  }

  @Test
  void aFifoInPlaceOfTheFileIsRefusedAtOnce() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m,mode=1777");
        DirHandle dir = Linux.get().openDirectory(shm.path().toString())) {
      shm.createSegment("nccl-Fifo01", 4_100);
      Segment judged = segment(dir, shm, "nccl-Fifo01");
      Files.delete(shm.file("nccl-Fifo01"));
      org.shmguard.testing.Cmd.run("mkfifo", shm.file("nccl-Fifo01").toString());

      List<LeasedUnlink.Done> done = new LeasedUnlink().reap(dir, List.of(new LeasedUnlink.Job(judged, "x")), false);

      assertThat(done).singleElement().extracting(LeasedUnlink.Done::result).isEqualTo(ReapOutcome.Result.SKIPPED);
      assertThat(shm.file("nccl-Fifo01")).exists();
    }
  }

  private static Segment segment(DirHandle dir, TmpfsMount shm, String name) throws IOException {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    StatxResult st = dir.lstat(n);
    Dev dev = shm.dev();
    long m = st.mtimeSec() * 1_000_000_000L + st.mtimeNsec();
    long c = st.ctimeSec() * 1_000_000_000L + st.ctimeNsec();
    return new Segment(dev, n, st.ino(), st.size(), st.allocatedBytes(), st.mode(), st.uid(), st.nlink(), m, c);
  }

  /** /proc/locks shows a lease being broken as "LEASE  BREAKING". */
  private static boolean leaseBreaking() {
    try {
      return Files.readString(Path.of("/proc/locks")).contains("BREAKING");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Process start(String... cmd) {
    try {
      return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path only(Path dir, String prefix) {
    List<Path> found = hiddenNames(dir).stream().map(dir::resolve).toList();
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  private static List<String> hiddenNames(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(LeasedUnlink.HIDDEN_PREFIX)).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
