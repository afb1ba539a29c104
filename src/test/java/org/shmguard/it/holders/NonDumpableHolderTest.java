package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CProgram;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A holder of uid 65534 that made itself non-dumpable (prctl PR_SET_DUMPABLE 0: its fd, fdinfo and
 * maps become root's, readable only with CAP_SYS_PTRACE) still holds its segments, and leaves the
 * pass complete, when shmguard runs with exactly the unit's capabilities (CapabilityBoundingSet).
 */
class NonDumpableHolderTest {

  @Test
  void aNonDumpableHoldersFdAndMappingKeepTheirSegmentsUnderTheUnitsCapabilities() throws Exception {
    Path bin = CProgram.build("redteam/nondumpable-holder.c");
    try (TmpfsMount watched = TmpfsMount.create("size=8m,mode=1777")) {
      Path byFd = watched.createSegment("nccl-Fd0001", 4_100);
      Path byMap = watched.createSegment("nccl-Map001", 4_100);
      Path leak = watched.createSegment("nccl-Leak05", 4_100);
      for (Path p : List.of(byFd, byMap, leak)) {
        Cmd.run("chown", "65534:65534", p.toString());
      }
      List<Process> holders = new ArrayList<>();
      try {
        for (String[] how : new String[][] {{"fd", byFd.toString()}, {"map", byMap.toString()}}) {
          Process p = new ProcessBuilder("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
              bin.toString(), how[0], how[1]).redirectErrorStream(true).start();
          holders.add(p);
          assertThat(new String(p.getInputStream().readNBytes(6))).isEqualTo("ready\n");
          assertThat(Cmd.run("stat", "-c", "%u", "/proc/" + p.pid() + "/fd").strip()).as("its fd directory is root's")
              .isEqualTo("0");
        }

        Cmd.Result r = CliRun.asUnit("clean", "--json", "-c", TestConfig.watching(watched.path(), "0s").toString());

        assertThat(r.status()).as(r.err()).isZero();
        JsonNode json = new ObjectMapper().readTree(r.out());
        assertThat(byFd).exists();
        assertThat(byMap).exists();
        assertThat(leak).as(r.out()).doesNotExist();
        assertThat(json.toString()).doesNotContain("incomplete");
      } finally {
        for (Process p : holders) {
          p.destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
      }
    }
  }
}
