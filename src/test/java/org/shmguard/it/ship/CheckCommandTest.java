package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** {@code shmguard check} on a real tmpfs: node-problem-detector's exit codes and one line of output. */
class CheckCommandTest {
  private TmpfsMount shm;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create("size=1m,mode=1777");
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  private Path config(String extra) {
    return TestConfig.write("mounts: [" + shm.path() + "]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n" + extra);
  }

  @Test
  void emptyMountIsHealthyWithOneLine() {
    CliRun run = CliRun.of("check", "-c", config("").toString());

    assertThat(run.status()).as(run.out() + run.err()).isZero();
    assertThat(run.out()).startsWith("ok: 1 mount").endsWith("\n").hasLineCount(1);
  }

  @Test
  void mountOverCriticalFillIsAProblem() {
    shm.createSegment("data.bin", 950 * 1024);

    CliRun run = CliRun.of("check", "-c", config("capacity:\n  critical: 90\n").toString());

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).hasLineCount(1).contains(shm.path() + " ").contains("% full (critical 90%)");
  }

  @Test
  void leakThatDryRunForbidsReapingIsAProblem() {
    shm.createSegment("nccl-Dry001", 4_100);

    CliRun run = CliRun.of("check", "-c", config("  dryRun: true\n").toString());

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).hasLineCount(1).contains("1 leaked segment").contains("reap.dryRun");
    assertThat(shm.file("nccl-Dry001")).exists();
  }

  @Test
  void leakTheDaemonMayReapIsNotAProblemAndCheckReapsNothing() {
    shm.createSegment("nccl-Rp0001", 4_100);

    CliRun run = CliRun.of("check", "-c", config("").toString());

    assertThat(run.status()).isZero();
    assertThat(run.out()).contains("1 leaked");
    assertThat(shm.file("nccl-Rp0001")).exists();
  }

  @Test
  void badConfigurationIsUnknownNotAProblem() {
    CliRun run = CliRun.of("check", "-c", TestConfig.write("capacity:\n  critical: 900\n").toString());

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.out()).startsWith("unknown: bad configuration:").contains("capacity.critical").hasLineCount(1);
  }
}
