package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.daemon.Daemon;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.model.HolderRef;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Verdict;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * A host process that holds a container's file by an fd it opened through
 * /proc/PID/root/dev/shm/NAME: the fd's mount is the container's tmpfs, which only the container's
 * mount namespace lists, not the holder's own or shmguard's. It is that file's holder in `scan`
 * (also run with exactly the shipped unit's capabilities and umask), `clean` and the daemon, whatever the pid order and whatever the container's processes hold: the
 * two layouts below are the ones in which the pass once read the holder before it had read the
 * container's mountinfo (the holder's pid below every container process's, and a container whose
 * processes hold no file of their own namespace), and so called the file leaked with no holder.
 */
class ForeignMountFdHolderTest {
  private static final String UNIT_CAPS = "-all,+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";
  private static final String CONFIG = "mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n";

  @Test
  void hostProcessStartedBeforeTheContainerHoldsTheFileItOpensThroughProcRoot() throws Exception {
    Sandbox.require();
    try (Proc holder = Proc.start("sh", "-c", "echo ready; read p; exec 3<\"$p\"; echo holding; read x");
        Proc container = Proc.container("exec 4</dev/null")) {
      Path file = container.shm().resolve("nccl-HostFd1");
      Files.write(file, new byte[4100]);
      holder.say(file.toString());
      assertThat(holder.readLine()).isEqualTo("holding");
      assertThat(holder.pid()).isLessThan(container.pid());

      assertHeldEverywhere(file, holder.pid());
    }
  }

  @Test
  void hostProcessHoldsTheFileOfAContainerWhoseProcessesHoldNoFiles() throws Exception {
    Sandbox.require();
    try (Proc container = Proc.container(":")) {
      Path file = container.shm().resolve("nccl-HostFd2");
      Files.write(file, new byte[4100]);
      try (Proc holder = Proc.start("sh", "-c", "exec 3<\"$0\"; echo ready; read x", file.toString())) {
        assertHeldEverywhere(file, holder.pid());
      }
    }
  }

  private static void assertHeldEverywhere(Path file, int holderPid) throws Exception {
    String name = file.getFileName().toString();
    Path config = TestConfig.write(CONFIG);

    JsonNode scan = CliRun.scanJson(config);
    assertThat(CliRun.verdictOf(scan, name)).isEqualTo("held");
    assertThat(CliRun.holderPids(scan, name)).containsExactly(holderPid);

    // As the shipped unit runs it: only its capabilities (CapabilityBoundingSet), its umask.
    Cmd.Result unit = Cmd.exec("setpriv", "--bounding-set", UNIT_CAPS, "--inh-caps", "-all", "sh", "-c",
        "umask 0077 && exec \"$0\" -XX:TieredStopAtLevel=1 -cp \"$1\" org.shmguard.cli.Main scan --json -c \"$2\"",
        Sandbox.javaBinary(), System.getProperty("java.class.path"), config.toString());
    assertThat(unit.status()).as(unit.err()).isZero();
    JsonNode unitScan = new ObjectMapper().readTree(unit.out());
    assertThat(CliRun.verdictOf(unitScan, name)).isEqualTo("held");
    assertThat(CliRun.holderPids(unitScan, name)).containsExactly(holderPid);

    CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());
    assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
    assertThat(clean.json().get("actions").toString()).as("held, so no candidate").doesNotContain(name);
    assertThat(file).exists();

    RecordingSink sink = new RecordingSink();
    try (Daemon daemon = Daemon.start(TestConfig.load(config), HostPaths.system(), sink, ServiceNotifier.none())) {
      PassReport pass = daemon.passNow().get(60, TimeUnit.SECONDS);
      List<Assessment> judged = pass.judgement().segments().stream()
          .filter(a -> a.segment().displayName().equals(name)).toList();
      assertThat(judged).hasSize(1);
      assertThat(judged.get(0).verdict()).as(judged.get(0).reason()).isEqualTo(Verdict.HELD);
      assertThat(judged.get(0).holders()).extracting(HolderRef::pid).containsExactly(holderPid);
      assertThat(pass.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals(name));
    }
    assertThat(file).exists();
  }

  /** A shell, or a "container" (a shell in its own PID and mount namespace with its own /dev/shm); ended by pid. */
  private static final class Proc implements AutoCloseable {
    private final Process process;
    private final int pid;
    private final BufferedReader out;
    private final OutputStream in;

    private Proc(Process process, int pid) throws IOException {
      this.process = process;
      this.pid = pid;
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = process.getOutputStream();
    }

    static Proc start(String... cmd) throws IOException {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      Proc proc = new Proc(p, (int) p.pid());
      proc.expectReady(String.join(" ", cmd));
      return proc;
    }

    /** A container whose shell runs {@code setup} after mounting its /dev/shm; its stdio are pipes. */
    static Proc container(String setup) throws IOException {
      List<String> cmd = new ArrayList<>(List.of("unshare", "--pid", "--fork", "--mount", "--propagation", "private",
          "--kill-child", "sh", "-c", "mount -t tmpfs -o size=1m,mode=1777 ctr-shm /dev/shm && " + setup
              + " && echo ready && read x"));
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      Proc unshare = new Proc(p, (int) p.pid());
      unshare.expectReady(String.join(" ", cmd));
      int shell = p.toHandle().children().mapToInt(h -> (int) h.pid()).findFirst()
          .orElseThrow(() -> new AssertionError("no shell under unshare"));
      return new Proc(p, shell);
    }

    private void expectReady(String what) throws IOException {
      String line = out.readLine();
      if (!"ready".equals(line)) {
        close();
        throw new AssertionError(what + " said " + line);
      }
    }

    int pid() {
      return pid;
    }

    Path shm() {
      return Path.of("/proc", Integer.toString(pid), "root", "dev", "shm");
    }

    void say(String line) throws IOException {
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }

    String readLine() throws IOException {
      return out.readLine();
    }

    /** SIGKILL: to a container's unshare first, whose --kill-child then ends the shell. */
    @Override
    public void close() {
      process.destroyForcibly();
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      try {
        process.waitFor(10, TimeUnit.SECONDS);
        ProcessHandle.of(pid).ifPresent(h -> h.onExit().orTimeout(10, TimeUnit.SECONDS).join());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        // gone already
      }
    }
  }
}
