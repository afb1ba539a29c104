package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.Podman;
import org.shmguard.testing.TestConfig;

/**
 * A real container (podman with runc) started with {@code --ipc=host} and its own PID namespace, the
 * layout of issue 20: it writes a PyTorch-named file with its own pid into the shared /dev/shm.
 * While the container lives the file is kept; once it is gone, it is reaped.
 */
class PodmanIpcHostTest {
  /** The container forks until its pids pass this, so that the name's pid is no process of the test's namespace. */
  private static final int LEAST_PID = 3000;

  @Test
  void aContainersLiveCreatorKeepsItsFileOnTheSharedShmAndItsEndLetsItBeReaped() throws Exception {
    String script = "n=0; while [ \"$n\" -lt " + LEAST_PID + " ]; do n=$(sh -c 'echo $$'); done; "
        + "sh -c 'printf \"%s\" \"batch 3 of the live job\" > /dev/shm/torch_$$_3735928559_0; echo \"$$ ready\"; exec sleep 600'; wait";
    try (Podman podman = Podman.create()) {
      Process container = podman.run(List.of("--ipc=host"), "sh", "-c", script);
      String line = new BufferedReader(new InputStreamReader(container.getInputStream(), StandardCharsets.UTF_8)).readLine();
      assertThat(line).as("the container's creator started").endsWith(" ready");
      int pid = Integer.parseInt(line.split(" ")[0]);
      assertThat(ProcessHandle.allProcesses().noneMatch(h -> h.pid() == pid)).as("pid %d is none of the test's", pid).isTrue();
      String name = "torch_" + pid + "_3735928559_0";
      Path file = Path.of("/dev/shm", name);
      try {
        Engine engine = Engine.create(TestConfig.load(TestConfig.write("mounts: [/dev/shm]\n"
            + "reap:\n  requireHostPidNamespace: false\nfamilies:\n  pytorch:\n    grace: 10s\n")), HostPaths.system());
        Thread.sleep(11_000);

        PassReport alive = engine.clean(false);
        Assessment a = of(alive, name);
        assertThat(a.mayReap()).as(a.reason()).isFalse();
        assertThat(a.reason()).contains("kept: its creator, pid " + pid + " (from its name), is alive: pid " + pid
            + " of PID namespace ").contains("can reach this mount and started before the file was made");
        assertThat(alive.outcomes()).noneMatch(o -> o.candidate().segment().displayName().equals(name));
        assertThat(Files.readString(file)).isEqualTo("batch 3 of the live job");

        podman.close(); // the container and every process of its PID namespace end
        PassReport gone = engine.clean(false);
        assertThat(of(gone, name).reason()).contains("its creator, pid " + pid + " (from its name), has exited");
        assertThat(gone.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals(name)).singleElement()
            .satisfies(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
        assertThat(Files.exists(file)).isFalse();
      } finally {
        Files.deleteIfExists(file);
      }
    }
  }

  private static Assessment of(PassReport pass, String name) {
    return pass.judgement().segments().stream().filter(a -> a.segment().displayName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError(name + " was not judged"));
  }
}
