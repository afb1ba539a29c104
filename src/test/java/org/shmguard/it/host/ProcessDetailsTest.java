package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.host.HostPaths;
import org.shmguard.host.ProcessDetails;
import org.shmguard.model.ProcessInfo;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * Who a real process is, as the daemon shows a holder: its command (whatever characters its name
 * has), uid and user, and start time as /proc says them; nothing for a process that has gone.
 * (A pid reused or a process that execs, on a fixture /proc, is in ObserveFastPathTest.)
 */
class ProcessDetailsTest {

  @Test
  void anOrdinaryUsersProcessIsNamedWithItsUidUserAndStartTime() throws Exception {
    Sandbox.require();
    Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "600").start();
    try {
      int pid = (int) p.pid();
      org.shmguard.testing.Eventually.until("setpriv has become sleep", java.time.Duration.ofSeconds(10),
          () -> comm(pid).equals("sleep"));

      ProcessInfo info = new ProcessDetails(HostPaths.system()).read(pid);

      assertThat(info.pid()).isEqualTo(pid);
      assertThat(info.command()).isEqualTo("sleep");
      assertThat(info.uid()).isEqualTo(65534);
      assertThat(info.user()).isEqualTo(Cmd.run("id", "-nu", "65534").strip());
      assertThat(info.startTicks()).isEqualTo(Long.parseLong(statFields(pid)[19]));
    } finally {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aCommandWithParenthesesAndSpacesIsReadWhole(@TempDir Path dir) throws Exception {
    Path odd = Files.copy(Path.of(Cmd.run("sh", "-c", "command -v sleep").strip()), dir.resolve("x) S (y"),
        StandardCopyOption.COPY_ATTRIBUTES);
    Process p = new ProcessBuilder(odd.toString(), "600").start();
    try {
      int pid = (int) p.pid();
      org.shmguard.testing.Eventually.until("it runs", java.time.Duration.ofSeconds(10), () -> comm(pid).equals("x) S (y"));

      ProcessInfo info = new ProcessDetails(HostPaths.system()).read(pid);

      assertThat(info.command()).isEqualTo("x) S (y");
      assertThat(info.startTicks()).isPositive();
      assertThat(info.uid()).isZero();
    } finally {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void aProcessThatHasGoneHasNoDetailsAndItsMemoryIsDropped() throws Exception {
    Process p = new ProcessBuilder("sleep", "600").start();
    int pid = (int) p.pid();
    ProcessDetails details = new ProcessDetails(HostPaths.system());
    assertThat(details.read(pid)).isNotNull();

    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);

    assertThat(details.read(pid)).isNull();
    assertThat(details.container(pid)).isNull();
  }

  private static String comm(int pid) {
    try {
      return Files.readString(Path.of("/proc", Integer.toString(pid), "comm")).strip();
    } catch (IOException e) {
      return "";
    }
  }

  /** The fields of /proc/PID/stat after the command: [0] is the state (field 3). */
  private static String[] statFields(int pid) throws IOException {
    String stat = Files.readString(Path.of("/proc", Integer.toString(pid), "stat"));
    return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
  }
}
