package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;

/**
 * The /proc pass's seam for the daemon's exit passes: {@code between} runs every few processes,
 * so a full pass over thousands of processes lets a holder's exit in many times, and a pass
 * without it runs nothing. Reads this machine's /proc (any user); what is held does not matter.
 */
class HolderScannerTest {
  private static final Dev NO_SUCH_MOUNT = Dev.of(0, 0xfffff);

  @Test
  void betweenRunsOnceEveryFewProcessesOfThePass() {
    AtomicInteger calls = new AtomicInteger();

    HolderPass pass = new HolderScanner(HostPaths.system()).scan(Set.of(NO_SUCH_MOUNT), null, calls::incrementAndGet);

    assertThat(pass.processes()).isPositive();
    assertThat(calls.get()).isEqualTo(pass.processes() / HolderScanner.BETWEEN_EVERY);
  }

  @Test
  void theExitPathsOwnPassYieldsToNothing() {
    HolderPass pass = new HolderScanner(HostPaths.system()).scanFdTables(Set.of(NO_SUCH_MOUNT), null);

    assertThat(pass.processes()).isPositive();
  }
}
