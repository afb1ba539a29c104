package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.host.ProcessConfinement;
import org.shmguard.testing.Eventually;

class ProcessConfinementTest {
  /** Docker's default capabilities (no SYS_NICE) as /proc/PID/status shows them in a container. */
  private static final String DOCKER_DEFAULT = "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\n"
      + "CapInh:\t0000000000000000\nCapPrm:\t00000000a80425fb\nCapEff:\t00000000a80425fb\n"
      + "CapBnd:\t00000000a80425fb\nCapAmb:\t0000000000000000\nNoNewPrivs:\t0\nSeccomp:\t2\nSeccomp_filters:\t1\n";

  @Test
  void dockerDefaultsBlockTheNumaCallsOfCuMemHostMemory() {
    ProcessConfinement c = ProcessConfinement.parse(DOCKER_DEFAULT);

    assertThat(c.seccomp()).isEqualTo(2);
    assertThat(c.boundingHasSysNice()).isFalse();
    assertThat(c.numaPolicyAllowed()).isFalse();
    assertThat(c.describe()).contains("a seccomp filter, CAP_SYS_NICE not in the bounding set");
  }

  @Test
  void sysNiceInTheBoundingSetAllowsThemEvenForANonRootJob() {
    // --cap-add SYS_NICE: bit 23 in the bounding set; a non-root user's CapEff stays 0
    String text = DOCKER_DEFAULT.replace("CapBnd:\t00000000a80425fb", "CapBnd:\t00000000a88425fb")
        .replace("CapEff:\t00000000a80425fb", "CapEff:\t0000000000000000");

    assertThat(ProcessConfinement.parse(text).numaPolicyAllowed()).isTrue();
  }

  @Test
  void withoutASeccompFilterNothingBlocksThem() {
    assertThat(ProcessConfinement.parse(DOCKER_DEFAULT.replace("Seccomp:\t2", "Seccomp:\t0")).numaPolicyAllowed()).isTrue();
  }

  @Test
  void malformedStatusIsUnknown() {
    assertThat(ProcessConfinement.parse("Name:\tx\nCapEff:\tzz\nCapBnd:\t0\nSeccomp:\t0\n")).isNull();
    assertThat(ProcessConfinement.parse("Name:\tx\n")).isNull();
    assertThat(ProcessConfinement.read(Path.of("/proc/999999999/status"))).isNull();
  }

  @Test
  void readsARealProcessWhoseBoundingSetLacksSysNice() throws Exception {
    Process p = new ProcessBuilder("setpriv", "--bounding-set", "-sys_nice", "sleep", "60").start();
    try {
      Path status = Path.of("/proc", Long.toString(p.pid()), "status");
      // setpriv execs sleep in the same pid once the bounding set is dropped
      Eventually.until("sleep's bounding set lacks CAP_SYS_NICE", java.time.Duration.ofSeconds(30), () -> {
        ProcessConfinement c = ProcessConfinement.read(status);
        return c != null && !c.boundingHasSysNice();
      });
      ProcessConfinement self = ProcessConfinement.read(Path.of("/proc/self/status"));
      assertThat(self).isNotNull();
      assertThat(self.boundingHasSysNice()).as("the test JVM, root in the sandbox").isTrue();
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aSeccompFilterWithoutSysNiceIsSeenAsBlockingTheNumaCalls() throws Exception {
    Path bin = org.shmguard.testing.CProgram.build("holders/numa-filtered.c");
    Process p = new ProcessBuilder("setpriv", "--bounding-set", "-sys_nice", bin.toString()).redirectErrorStream(true).start();
    try (var out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream()))) {
      String probe = out.readLine();
      assertThat(out.readLine()).isEqualTo("ready");
      // the kernel refused the call cuMem host memory needs, as Docker's default profile does
      assertThat(probe).isEqualTo("get_mempolicy: EPERM");

      ProcessConfinement c = ProcessConfinement.read(Path.of("/proc", Long.toString(p.pid()), "status"));

      assertThat(c.seccomp()).isEqualTo(2);
      assertThat(c.boundingHasSysNice()).isFalse();
      assertThat(c.numaPolicyAllowed()).isFalse();
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
