package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Pidfd;

/** A pidfd tells a running process from one that has exited, without any permission over it. */
class PidfdAliveTest {
  @Test
  void aliveUntilTheProcessExits() throws Exception {
    Process p = new ProcessBuilder("sleep", "600").start();
    int fd = Pidfd.open((int) p.pid());
    try {
      assertThat(Pidfd.alive(fd)).isTrue();
      p.destroyForcibly().waitFor();
      assertThat(Pidfd.alive(fd)).isFalse();
    } finally {
      Pidfd.close(fd);
    }
  }
}
