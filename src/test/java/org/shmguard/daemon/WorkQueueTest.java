package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.PassReport;

/** Who waits on what in the worker's queue: plain JVM, no root, the clock passed in. */
class WorkQueueTest {
  private static final long T0 = 1_000_000_000L;
  private final AtomicInteger wakes = new AtomicInteger();
  private final WorkQueue queue = new WorkQueue(wakes::incrementAndGet);

  @Test
  void everyRequestWakesTheWorkerAndATriggerWaitingAlreadyIsNotAddedAgain() {
    queue.offer(WorkRequest.Trigger.SWEEP);
    queue.offer(WorkRequest.Trigger.HEARTBEAT);
    queue.offer(WorkRequest.Trigger.SWEEP);

    assertThat(wakes).hasValue(3);
    assertThat(queue.take(T0)).containsExactly(WorkRequest.Trigger.SWEEP, WorkRequest.Trigger.HEARTBEAT);
    assertThat(queue.take(T0)).isEmpty();
  }

  @Test
  void aHoldersExitGoesBeforeEverythingWaitingAndJoinsAnExitWaitingAlready() {
    queue.offer(WorkRequest.Trigger.SUMMARY);
    queue.offer(new WorkRequest.Exit(new int[] {7}));
    queue.offer(new WorkRequest.Exit(new int[] {9, 7}));

    var taken = queue.take(T0);

    assertThat(taken).hasSize(2);
    assertThat(taken.get(0)).isInstanceOfSatisfying(WorkRequest.Exit.class,
        e -> assertThat(e.pids()).containsExactly(7, 9));
    assertThat(taken.get(1)).isEqualTo(WorkRequest.Trigger.SUMMARY);
  }

  @Test
  void aRequestPastItsTimeIsDroppedWhenTakenNeverCarriedOutLate() {
    var late = new WorkRequest.DryRun(WorkRequest.Answer.within("a dry run", Duration.ofSeconds(60), T0));
    var onTime = new WorkRequest.DryRun(WorkRequest.Answer.within("a dry run", Duration.ofSeconds(60), T0 + 5_000_000_000L));
    queue.offer(late);
    queue.offer(onTime);

    var taken = queue.take(T0 + 61_000_000_000L);

    assertThat(taken).containsExactly(onTime);
    assertThatThrownBy(() -> late.answer().future().get()).hasMessageContaining("the request waited too long");
    assertThat(onTime.answer().future()).isNotDone();
  }

  @Test
  void aRequestExactlyAtItsDeadlineIsStillCarriedOut() {
    var r = new WorkRequest.DryRun(WorkRequest.Answer.within("a dry run", Duration.ofSeconds(1), T0));
    queue.offer(r);

    assertThat(queue.take(T0 + 1_000_000_000L)).containsExactly(r);
  }

  @Test
  void anUnboundedRequestWaitsAsLongAsItTakes() {
    var r = WorkRequest.dryRun();
    queue.offer(r);

    assertThat(queue.take(Long.MAX_VALUE)).containsExactly(r);
  }

  @Test
  void aFullPassIsAnsweredByThePassThatStartsAfterItWasTakenNotByOneAlreadyRunning() {
    CompletableFuture<PassReport> f = queue.ask(WorkRequest.fullPass());

    assertThat(queue.passStarts()).as("a pass that started before the worker took the request").isEmpty();
    assertThat(queue.take(T0)).singleElement().isInstanceOf(WorkRequest.FullPass.class);
    var served = queue.passStarts();

    assertThat(served).hasSize(1);
    assertThat(served.get(0).future()).isSameAs(f);
    assertThat(queue.passStarts()).as("served once").isEmpty();
  }

  @Test
  void aNewerReloadReplacesOneStillWaiting() {
    var first = WorkRequest.reload(() -> { }, Set::of);
    var second = WorkRequest.reload(() -> { }, Set::of);
    queue.offer(first);
    queue.offer(WorkRequest.Trigger.SWEEP);
    queue.offer(second);

    assertThat(queue.take(T0)).containsExactly(WorkRequest.Trigger.SWEEP, second);
    assertThatThrownBy(() -> first.answer().future().get()).hasMessageContaining("a newer reload replaced it");
  }

  @Test
  void aStopFailsEveryAnswerOwedAndEveryRequestAskedAfterIt() {
    CompletableFuture<PassReport> taken = queue.ask(WorkRequest.fullPass());
    queue.take(T0);
    CompletableFuture<PassReport> waiting = queue.ask(WorkRequest.dryRun());

    queue.close();
    CompletableFuture<PassReport> after = queue.ask(WorkRequest.fullPass());

    for (CompletableFuture<PassReport> f : java.util.List.of(taken, waiting, after)) {
      assertThatThrownBy(f::get).hasMessageContaining("the daemon is stopping");
    }
    queue.offer(WorkRequest.Trigger.SWEEP);
    assertThat(queue.take(T0)).isEmpty();
  }

  @Test
  void anExitNamesAtLeastOnePid() {
    assertThatThrownBy(() -> new WorkRequest.Exit(new int[0])).hasMessageContaining("at least one pid");
  }
}
