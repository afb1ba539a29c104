package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.model.ProcessInfo;

/** Whether a process a pass saw has gone, from its /proc/PID/stat. */
class ProcessExitsTest {
  private static String stat(char state, int threads, long start) {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime
    // cstime priority nice num_threads itrealvalue starttime ...
    return "42 (a (b) c) " + state + " 1 42 42 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 " + threads + " 0 " + start + " 1000 0";
  }

  @Test
  void aRunningProcessWithItsStartTimeIsNotGone() {
    assertThat(ProcessExits.goneByStat(stat('S', 1, 777), 777)).isFalse();
  }

  @Test
  void aPidNowNamingAProcessWithAnotherStartTimeIsGone() {
    assertThat(ProcessExits.goneByStat(stat('S', 1, 778), 777)).isTrue();
  }

  @Test
  void aZombieWithNoThreadLeftIsGoneAndALeaderWhoseThreadsLiveIsNot() {
    assertThat(ProcessExits.goneByStat(stat('Z', 1, 777), 777)).isTrue();
    assertThat(ProcessExits.goneByStat(stat('Z', 3, 777), 777)).isFalse();
  }

  @Test
  void aRealProcessIsAliveUntilKilledAndGoneAfter() throws Exception {
    Process p = new ProcessBuilder("sleep", "60").start();
    try {
      ProcessExits exits = new ProcessExits(HostPaths.system());
      ProcessInfo seen = new ProcessDetails(HostPaths.system()).read((int) p.pid());
      assertThat(exits.gone(seen)).isFalse();

      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);

      assertThat(exits.gone(seen)).isTrue();
    } finally {
      p.destroyForcibly();
    }
  }
}
