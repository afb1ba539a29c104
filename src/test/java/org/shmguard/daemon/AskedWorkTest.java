package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.Outputs;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Root's requests carried out at once on the pass thread: told to the outputs first, then answered; a stop fails them. */
class AskedWorkTest {
  private final List<PassReport> told = new CopyOnWriteArrayList<>();

  private AskedWork askedWork(Engine engine, PassThread thread, boolean stopping) {
    return new AskedWork(engine, told::add, thread, () -> stopping, () -> { });
  }

  @Test
  void aDryRunIsAnsweredWithWhatItWouldReapAndUnlinksNothing() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m");
         PassThread thread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(), ServiceNotifier.none())) {
      Path seg = shm.createSegment("nccl-Asked1", 4096);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "0s")), HostPaths.system());
      WorkRequest.DryRun r = WorkRequest.dryRun();

      assertThat(askedWork(engine, thread, false).carryOut(r)).isTrue();

      PassReport report = r.answer().future().get(60, TimeUnit.SECONDS);
      assertThat(report.dryRun()).isTrue();
      assertThat(report.outcomes()).extracting(ReapOutcome::result).containsExactly(ReapOutcome.Result.WOULD_REAP);
      assertThat(seg).exists();
      assertThat(told).as("the caller reads a dry run; no output hears of it").isEmpty();
    }
  }

  @Test
  void aRemountWithoutARemounterIsAnsweredWithNothingAndTellsNobody() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m");
         PassThread thread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(), ServiceNotifier.none())) {
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system());
      var mount = engine.judge().mounts().get(0).mount();
      WorkRequest.Remount r = WorkRequest.remount(mount, null, "a test", java.time.Duration.ofSeconds(60));

      assertThat(askedWork(engine, thread, false).carryOut(r)).isTrue();

      assertThat(r.answer().future().get(60, TimeUnit.SECONDS)).isNull();
      assertThat(told).isEmpty();
    }
  }

  @Test
  void aReloadsSettingsAreSwappedInOnThePassThread() throws Exception {
    try (PassThread thread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(), ServiceNotifier.none())) {
      AtomicReference<String> ranOn = new AtomicReference<>();
      WorkRequest.Reload r = WorkRequest.reload(() -> ranOn.set(Thread.currentThread().getName()), java.util.Set::of);

      assertThat(askedWork(null, thread, false).carryOut(r)).isTrue();

      assertThat(r.answer().future()).isDone();
      assertThat(ranOn.get()).isEqualTo("shmguard-pass");
    }
  }

  @Test
  void aStopWhileItRunsFailsItsAnswer() {
    try (PassThread thread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(), ServiceNotifier.none())) {
      WorkRequest.Reload r = WorkRequest.reload(() -> sleep(500), java.util.Set::of);

      assertThat(askedWork(null, thread, true).carryOut(r)).isFalse();

      assertThatThrownBy(() -> r.answer().future().get()).hasMessageContaining("the daemon is stopping");
    }
  }

  @Test
  void aFullPassIsNotCarriedOutHere() {
    try (PassThread thread = new PassThread(PassThread.DEADLINE, new Outputs("test").sink(), ServiceNotifier.none())) {
      assertThatThrownBy(() -> askedWork(null, thread, false).carryOut(WorkRequest.fullPass()))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FullPass");
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
