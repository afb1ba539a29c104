package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.CliRun;

/** What an operator sees when the configuration is wrong: one line, exit 78, nothing done. */
class BadConfigExitTest {

  @Test
  void everyCommandStopsWithStatus78AndTheKeyAndLine(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("shmguard.yaml");
    Files.writeString(bad, "# comment\nreap:\n  grace: soon\n");
    for (String command : new String[] {"scan", "clean", "daemon"}) {
      CliRun run = CliRun.of(command, "--config", bad.toString());

      assertThat(run.status()).as(command).isEqualTo(78);
      assertThat(run.out()).isEmpty();
      assertThat(run.err().strip()).isEqualTo("shmguard: bad configuration: " + bad + ":3: reap.grace: \"soon\" is not a duration; "
          + "allowed: a duration from 0ms to 30d: a whole number with a unit ms, s, m, h or d (such as 500ms, 30s, 2m)");
    }
  }

  @Test
  void unknownOptionIsAUsageErrorWithStatus2() {
    CliRun run = CliRun.of("scan", "--frobnicate");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).contains("Unknown option: '--frobnicate'");
  }
}
