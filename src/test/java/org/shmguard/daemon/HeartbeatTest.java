package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.FsUsage;

/** What a heartbeat counts as a change worth a full pass, against what the last full pass measured. */
class HeartbeatTest {
  private static final long SIZE = 100L << 20;
  private static final ShmMount.Usage THEN = new ShmMount.Usage(SIZE, 10L << 20, SIZE - (10L << 20), 1000, 990);

  private static FsUsage now(long size, long used, long inodes, long freeInodes) {
    return new FsUsage(size, size - used, size - used, inodes, freeInodes, false);
  }

  @Test
  void theSameReadingIsNoChange() {
    assertThat(Heartbeat.change(THEN, now(SIZE, 10L << 20, 1000, 990), true)).isNull();
  }

  @Test
  void usedBytesMovedByLessThanOnePercentOfTheSizeIsNoChange() {
    assertThat(Heartbeat.change(THEN, now(SIZE, (10L << 20) + SIZE / 100 - 1, 1000, 990), true)).isNull();
    assertThat(Heartbeat.change(THEN, now(SIZE, (10L << 20) - SIZE / 100 + 1, 1000, 990), true)).isNull();
  }

  @Test
  void usedBytesMovedByOnePercentEitherWayBringsAPass() {
    assertThat(Heartbeat.change(THEN, now(SIZE, (10L << 20) + SIZE / 100, 1000, 990), true)).startsWith("used");
    assertThat(Heartbeat.change(THEN, now(SIZE, (10L << 20) - SIZE / 100, 1000, 990), false)).startsWith("used");
  }

  @Test
  void aRemountOrAMountThatCannotBeMeasuredBringsAPass() {
    assertThat(Heartbeat.change(THEN, now(2 * SIZE, 10L << 20, 1000, 990), true)).startsWith("size");
    assertThat(Heartbeat.change(THEN, null, false)).isEqualTo("cannot be measured");
  }

  @Test
  void aFileCountChangedBringsAPassOnlyWhereShmguardMayAct() {
    assertThat(Heartbeat.change(THEN, now(SIZE, 10L << 20, 1000, 989), true)).startsWith("files");
    assertThat(Heartbeat.change(THEN, now(SIZE, 10L << 20, 1000, 989), false)).isNull();
  }
}
