package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.shmguard.nativ.Posix;
import org.shmguard.testing.Cmd;

class PosixTest {
  @Test
  void aUidNamesTheLoginTheSystemsOwnLookupNames() {
    String id = Cmd.run("getent", "passwd", "65534").split(":")[0];
    assertThat(Posix.get().userName(0)).contains("root");
    assertThat(Posix.get().userName(65534)).contains(id);
  }

  @Test
  void aUidNoPasswdEntryNamesHasNoName() {
    assertThat(Posix.get().userName(1_999_999_999)).isEmpty();
  }

  @Test
  void killReportsTheErrnoOfAProcessThatDoesNotExist() {
    assertThat(Posix.get().kill(Integer.MAX_VALUE, 0)).isEqualTo(3); // ESRCH
    assertThat(Posix.get().kill((int) ProcessHandle.current().pid(), 0)).isZero();
  }
}
