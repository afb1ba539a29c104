package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How many requests each user may make: its own bucket, the burst, the refill, one stretch of refusals. */
class RequestRateTest {
  private static final long MS = 1_000_000L;

  @Test
  void aUserGetsItsBurstAtOnceThenRefusalsAndOtherUsersAreUntouched() {
    RequestRate rate = new RequestRate(3, 10);
    long t = 1_000 * MS;
    for (int i = 0; i < 3; i++) {
      assertThat(rate.take("nobody", t).admitted()).isTrue();
    }
    assertThat(rate.take("nobody", t)).isEqualTo(RequestRate.Taken.FIRST_REFUSED);
    assertThat(rate.take("nobody", t)).isEqualTo(RequestRate.Taken.REFUSED);
    assertThat(rate.take("alice", t).admitted()).isTrue();
    assertThat(rate.take("root", t).admitted()).isTrue();
  }

  @Test
  void tokensComeBackAtTheRateAndAStretchEndsOnlyOnceTheBucketIsFull() {
    RequestRate rate = new RequestRate(2, 10);
    long t = 5_000 * MS;
    rate.take("nobody", t);
    rate.take("nobody", t);
    assertThat(rate.take("nobody", t)).isEqualTo(RequestRate.Taken.FIRST_REFUSED);

    assertThat(rate.take("nobody", t + 50 * MS).admitted()).as("half a token").isFalse();
    assertThat(rate.take("nobody", t + 100 * MS)).as("one token, 100 ms later").isEqualTo(RequestRate.Taken.ADMITTED);
    assertThat(rate.take("nobody", t + 100 * MS)).as("the same stretch").isEqualTo(RequestRate.Taken.REFUSED);

    // quiet until the bucket is full again: the next refusal begins a new stretch
    long later = t + 100 * MS + 200 * MS;
    rate.take("nobody", later);
    rate.take("nobody", later);
    assertThat(rate.take("nobody", later)).isEqualTo(RequestRate.Taken.FIRST_REFUSED);
  }

  @Test
  void usersWithAFullBucketAreForgottenSoManyUsersCostBoundedMemory() {
    RequestRate rate = new RequestRate(4, 1);
    long t = 0;
    for (int uid = 0; uid < 5000; uid++) {
      rate.take("user" + uid, t);
      t += 10 * 1_000 * MS; // each bucket is full again by the next user
    }
    assertThat(rate.users()).isLessThanOrEqualTo(1024);
  }
}
