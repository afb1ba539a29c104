package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Eventually;

/**
 * Walks that do not answer: bounded for the caller, not retried while stuck, capped through
 * namespaces; and walks that are only slow (running, or starved of CPU by real busy processes) are
 * waited for. A walk that does not answer is asleep in the kernel, as one through a FUSE server that
 * stopped answering is: here, in open(2) of a FIFO that no process writes, until the test opens it.
 */
class PathWalksTest {
  private static final Duration DEADLINE = Duration.ofMillis(200);
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final PathWalks walks = new PathWalks(DEADLINE, 2);
  @TempDir Path dir;
  private RandomAccessFile server;

  PathWalksTest() {
    walks.onStallAndRecovery(p -> events.add("stalled " + p), p -> events.add("recovered " + p));
  }

  @AfterEach
  void answer() throws IOException {
    answerAll(); // every stuck walk returns: no thread outlives the test
    server.close();
  }

  /** Opens the FIFO read-write (which never blocks): every open(2) waiting for a writer returns. */
  private void answerAll() throws IOException {
    if (server == null) {
      server = new RandomAccessFile(fifo().toFile(), "rw");
    }
  }

  private Path fifo() throws IOException {
    Path f = dir.resolve("server");
    if (!Files.exists(f)) {
      try {
        assertThat(new ProcessBuilder("mkfifo", f.toString()).inheritIO().start().waitFor()).isZero();
      } catch (InterruptedException e) {
        throw new IOException(e);
      }
    }
    return f;
  }

  /** Asleep in open(2) until {@link #answerAll}: no CPU, no run queue, as a FUSE walk whose server is gone. */
  private String hang() throws IOException {
    Files.newInputStream(fifo()).close();
    return "late";
  }

  @Test
  void aWalkThatDoesNotAnswerFailsAtTheDeadlineAndIsNotRetriedUntilItReturns() throws Exception {
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> walks.run("/proc/7/root/dev/shm", this::hang)).isInstanceOf(PathWalks.Stalled.class)
        .hasMessageContaining("did not answer within 200 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));

    AtomicBoolean ran = new AtomicBoolean();
    assertThatThrownBy(() -> walks.run("/proc/7/root/dev/shm", () -> ran.getAndSet(true)))
        .isInstanceOf(PathWalks.Stalled.class).hasMessageContaining("skipped until it answers");
    assertThat(ran).as("no second thread for a path that is stuck").isFalse();
    assertThat(walks.run("/dev/shm", () -> "answers")).isEqualTo("answers");
    assertThat(walks.stuckPaths()).containsExactly("/proc/7/root/dev/shm");

    answerAll();
    // The walk's thread forgets the path, then tells its recovery: wait for both.
    Eventually.until("the stuck walk returned", Duration.ofSeconds(30),
        () -> walks.stuckPaths().isEmpty() && events.contains("recovered /proc/7/root/dev/shm"));
    assertThat(walks.run("/proc/7/root/dev/shm", () -> "again")).isEqualTo("again");
    assertThat(events).containsExactly("stalled /proc/7/root/dev/shm", "recovered /proc/7/root/dev/shm");
  }

  @Test
  void stuckWalksThroughNamespacesAreCappedButHostPathsStillRun() {
    for (int pid = 1; pid <= 2; pid++) {
      String path = "/proc/" + pid + "/root/dev/shm";
      assertThatThrownBy(() -> walks.run(path, this::hang)).isInstanceOf(PathWalks.Stalled.class);
    }
    AtomicInteger ran = new AtomicInteger();
    assertThatThrownBy(() -> walks.run("/proc/3/root/dev/shm", ran::incrementAndGet))
        .isInstanceOf(PathWalks.Stalled.class).hasMessageContaining("2 walks through other namespaces' roots are stuck");
    assertThat(ran).hasValue(0);

    assertThat(runs("/run/containers/abc/shm")).as("a host path is never refused by the cap").isEqualTo("ok");
  }

  private String runs(String path) {
    try {
      return walks.run(path, () -> "ok");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aHandleThatArrivesAfterTheCallerGaveUpIsClosed() throws Exception {
    AtomicBoolean closed = new AtomicBoolean();
    AutoCloseable handle = () -> closed.set(true);
    assertThatThrownBy(() -> walks.run("/proc/9/root/dev/shm", () -> {
      hang();
      return handle;
    })).isInstanceOf(PathWalks.Stalled.class);

    answerAll();
    Eventually.until("the late handle closed", Duration.ofSeconds(30), closed::get);
  }

  @Test
  void aWalkStarvedOfCpuByBusyProcessesIsWaitedForNotStalled() throws Exception {
    int cores = Runtime.getRuntime().availableProcessors();
    List<Process> hogs = new ArrayList<>();
    try {
      for (int i = 0; i < 4 * cores; i++) { // a load of 4 per core, on top of the machine's own
        hogs.add(new ProcessBuilder("sh", "-c", "while :; do :; done").start());
      }
      long t0 = System.nanoTime();
      // A walk that needs 600 ms of wall time, running the whole while: three deadlines, under the limit of five.
      String got = walks.run("/dev/shm", () -> {
        long end = System.nanoTime() + 600_000_000L;
        long spins = 0;
        while (System.nanoTime() < end) {
          spins++;
        }
        return "answered after " + spins + " spins";
      });
      long ms = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("a 600 ms walk under %d busy processes on %d cores: answered in %d ms (deadline %d ms)%n",
          hogs.size(), cores, ms, DEADLINE.toMillis());
      assertThat(got).startsWith("answered after ");
      assertThat(walks.stuckPaths()).isEmpty();
      assertThat(events).isEmpty();
    } finally {
      for (Process h : hogs) {
        h.destroyForcibly();
        h.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aWalkAsleepInTheKernelIsStalledAtTheDeadlineNotTheStarvedLimit() throws Exception {
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> walks.run("/proc/11/root/dev/shm", this::hang)).isInstanceOf(PathWalks.Stalled.class);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertThat(ms).as("asleep past the deadline: told then, not after %d deadlines", PathWalks.STARVED_DEADLINES)
        .isLessThan(DEADLINE.toMillis() * PathWalks.STARVED_DEADLINES);
  }

  @Test
  void theWalksOwnErrorReachesTheCaller() {
    assertThatThrownBy(() -> walks.run("/proc/5/root/dev/shm", () -> {
      throw new NoSuchFileException("/proc/5/root/dev/shm");
    })).isInstanceOf(NoSuchFileException.class);
    assertThat(walks.stuckPaths()).isEmpty();
  }
}
