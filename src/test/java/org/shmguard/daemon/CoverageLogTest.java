package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** One info line per change in what passes leave out, debug while it stays the same. */
class CoverageLogTest {
  private final CoverageLog log = new CoverageLog();

  @Test
  void whatIsLeftOutIsSaidAtInfoOnceThenAtDebugWhileItLasts() {
    assertThat(log.next("1,000 files beyond the share", "true/0/0"))
        .isEqualTo(new CoverageLog.Line(true, "not examined in this pass: 1,000 files beyond the share"));
    assertThat(log.next("900 files beyond the share", "true/0/0").info()).isFalse();
    assertThat(log.next("900 files beyond the share; 1 report-only mount", "true/1/0").info()).isTrue();
  }

  @Test
  void theEndOfLeavingOutIsSaidOnceAndANormalPassSaysNothing() {
    assertThat(log.next(null, "false/0/0")).isNull();
    log.next("5 files beyond the share", "true/0/0");

    assertThat(log.next(null, "false/0/0")).isEqualTo(new CoverageLog.Line(true, CoverageLog.ALL_AGAIN));
    assertThat(log.next(null, "false/0/0")).isNull();
  }
}
