package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Pidfd;
import org.shmguard.nativ.Poll;

/** poll(2) over pidfds, as the worker waits and as a full pass looks between processes: child processes of its own. */
class PollTest {
  @Test
  void aPidfdIsReadyNowOnlyOnceItsProcessExited() throws Exception {
    Process child = new ProcessBuilder("sleep", "60").start();
    int pidfd = Pidfd.open((int) child.pid());
    try {
      assertThat(Poll.readyNow(new int[] {pidfd}).isEmpty()).isTrue();

      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);

      assertThat(Poll.readyNow(new int[] {pidfd})).isEqualTo(bits(0));
    } finally {
      Pidfd.close(pidfd);
      child.destroyForcibly();
    }
  }

  @Test
  void nothingToLookAtIsNothingReady() throws Exception {
    assertThat(Poll.readyNow(new int[0]).isEmpty()).isTrue();
  }

  @Test
  void awaitReturnsAtOnceAfterAWakeAndSaysNoDescriptorIsReady() throws Exception {
    Process child = new ProcessBuilder("sleep", "60").start();
    int pidfd = Pidfd.open((int) child.pid());
    try (Poll poll = Poll.create()) {
      poll.wake();
      long t0 = System.nanoTime();

      BitSet ready = poll.await(new int[] {pidfd}, 30_000);

      assertThat(ready.isEmpty()).isTrue();
      assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(10));
    } finally {
      Pidfd.close(pidfd);
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static BitSet bits(int i) {
    BitSet b = new BitSet();
    b.set(i);
    return b;
  }
}
