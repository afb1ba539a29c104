package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Eventually;

/** Walks that do not answer: bounded for the caller, not retried while stuck, capped through namespaces. */
class PathWalksTest {
  private static final Duration DEADLINE = Duration.ofMillis(200);
  private final CountDownLatch server = new CountDownLatch(1);
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final PathWalks walks = new PathWalks(DEADLINE, 2);

  PathWalksTest() {
    walks.onStallAndRecovery(p -> events.add("stalled " + p), p -> events.add("recovered " + p));
  }

  @AfterEach
  void answer() {
    server.countDown(); // every stuck walk returns: no thread outlives the test
  }

  private String hang() throws IOException {
    try {
      server.await();
    } catch (InterruptedException e) {
      throw new IOException(e);
    }
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

    server.countDown();
    Eventually.until("the stuck walk returned", Duration.ofSeconds(30), () -> walks.stuckPaths().isEmpty());
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

    server.countDown();
    Eventually.until("the late handle closed", Duration.ofSeconds(30), closed::get);
  }

  @Test
  void theWalksOwnErrorReachesTheCaller() {
    assertThatThrownBy(() -> walks.run("/proc/5/root/dev/shm", () -> {
      throw new NoSuchFileException("/proc/5/root/dev/shm");
    })).isInstanceOf(NoSuchFileException.class);
    assertThat(walks.stuckPaths()).isEmpty();
  }
}
