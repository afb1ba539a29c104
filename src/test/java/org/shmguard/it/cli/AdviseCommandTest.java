package org.shmguard.it.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;

/** {@code shmguard advise} without a daemon: --daemon-only gives up, else the advice is worked out here and says so. */
class AdviseCommandTest {
  @Test
  void withNoDaemonAndDaemonOnlyItPrintsNothingAndExitsOne() throws Exception {
    Sandbox.require();
    Path nowhere = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "no-daemon-").resolve("advice.sock");

    CliRun run = CliRun.of("advise", "--socket", nowhere.toString(), "--daemon-only", "--timeout", "1s");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).contains("no daemon answers on " + nowhere);
    Files.delete(nowhere.getParent());
  }

  @Test
  void withNoDaemonItAdvisesFromTheTmpfsAloneInTheFormatAsked() throws Exception {
    Sandbox.require();
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777")) {
      Path nowhere = shm.path().resolve("no-daemon.sock");

      CliRun run = CliRun.of("advise", "--socket", nowhere.toString(), "--shm", shm.path().toString(), "--local-ranks", "2",
          "--format", "json", "--timeout", "1s");

      assertThat(run.status()).as(run.err()).isZero();
      assertThat(run.out()).startsWith("{").contains("\"action\":", "\"mount\":{\"name\":\"" + shm.path());
      assertThat(run.err()).contains("advice worked out here from " + shm.path() + " alone");
    }
  }
}
