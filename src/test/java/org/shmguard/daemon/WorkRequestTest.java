package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The requests and their answers' one deadline rule, in a plain JVM. */
class WorkRequestTest {
  private static final long T0 = 42_000_000_000L;

  @Test
  void aBoundedAnswerExpiresOnlyAfterItsTime() {
    var a = WorkRequest.Answer.<Void>within("a remount", Duration.ofMillis(10), T0);

    assertThat(a.expired(T0)).isFalse();
    assertThat(a.expired(T0 + 10_000_000)).isFalse();
    assertThat(a.expired(T0 + 10_000_001)).isTrue();
  }

  @Test
  void anUnboundedAnswerNeverExpiresWhateverTheClockSays() {
    var a = WorkRequest.Answer.<Void>unbounded("a reload");

    assertThat(a.expired(Long.MIN_VALUE)).isFalse();
    assertThat(a.expired(Long.MAX_VALUE)).isFalse();
  }

  @Test
  void aDeadlineHoldsAcrossTheWrapOfNanoTime() {
    var a = WorkRequest.Answer.<Void>within("a remount", Duration.ofSeconds(1), Long.MAX_VALUE - 10);

    assertThat(a.expired(Long.MAX_VALUE)).isFalse();
    assertThat(a.expired(Long.MIN_VALUE + 1_000_000_000L)).isTrue();
  }

  @Test
  void anAnswerCompletesOrFailsItsFutureOnce() {
    var a = WorkRequest.Answer.<String>unbounded("a dry run");
    a.complete("done");
    a.fail(new IllegalStateException("too late"));

    assertThat(a.future()).isCompletedWithValue("done");
  }

  @Test
  void exitsJoinedNameEachPidOnceInTheOrderSeen() {
    var joined = new WorkRequest.Exit(new int[] {3, 5}).and(new WorkRequest.Exit(new int[] {5, 2}));

    assertThat(joined.pids()).containsExactly(3, 5, 2);
  }

  @Test
  void anExitKeepsItsOwnCopyOfThePids() {
    int[] pids = {7};
    var e = new WorkRequest.Exit(pids);
    pids[0] = 8;

    assertThat(e.pids()).containsExactly(7);
  }

  @Test
  void aRemountNamesItsMount() {
    assertThatThrownBy(() -> WorkRequest.remount(null, null, "root", Duration.ofSeconds(1)))
        .isInstanceOf(NullPointerException.class);
  }
}
