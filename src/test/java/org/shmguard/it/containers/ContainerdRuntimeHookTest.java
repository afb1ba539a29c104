package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.ContainerdCri;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * Zero-touch sizing under containerd 1.6's CRI, which reads no hooks.d: the runtime
 * packaging/share/oci-runtime as the CRI plugin's {@code BinaryName} (a runtime {@code shmguard}
 * of type io.containerd.runc.v2, made the default, as an operator would choose it), the same
 * binary Docker registers. A pod's container that asks for four GPUs sees, at its first
 * instruction, the pod's sandbox /dev/shm grown by the daemon; a pod without a GPU keeps 64 MiB
 * and gets no hook.
 */
class ContainerdRuntimeHookTest {
  private static final Path CHECKOUT = Path.of("").toAbsolutePath();
  /** Where the hook asks by default: the sandbox's own /run. */
  private static final Path RUN = Path.of("/run/shmguard");
  /** systemd/shmguard.service's CapabilityBoundingSet. */
  private static final String UNIT_CAPS = "+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";
  private static ContainerdCri cri;

  @BeforeAll
  static void startContainerd() {
    Sandbox.require();
    assumeTrue(ContainerdCri.installed(), "needs containerd 1.6, runc, golang-go and busybox-static");
    cri = ContainerdCri.start(CHECKOUT.resolve("packaging/share/oci-runtime"));
  }

  @AfterAll
  static void stopContainerd() {
    if (cri != null) {
      cri.close();
    }
  }

  @Test
  void aGpuPodsContainerSeesItsSandboxShmGrownAtItsFirstInstruction() throws Exception {
    Files.createDirectories(RUN);
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 1s\nadvice:\n  socket: " + RUN.resolve("advice.sock") + "\n  envFile: "
        + RUN.resolve("advice.env") + "\nremount:\n  enabled: true\n  targetSize: 1G\n  maxSize: 2G\n"
        + "runtimes:\n  kubeletRoot: \"\"\n  podLogs: " + cri.podLogs() + "\n  dockerRoot: \"\"\n  containerStorage: []\n");
    Process daemon = null;
    try (Journald journald = Journald.start()) {
      // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
      daemon = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
          "--bounding-set", "-all," + UNIT_CAPS, Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
          System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(cri.dir().resolve("shmguard.log").toFile()).start();
      Eventually.until("the advice socket", Duration.ofSeconds(60), () -> Files.exists(RUN.resolve("advice.sock")));

      String uid = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
      ContainerdCri.Pod gpu = cri.runPod("training", "llama-0", uid, false);
      cri.run(gpu, "rank0", 0, Map.of("NVIDIA_VISIBLE_DEVICES", "0,1,2,3"), "sh", "-c", "df -k /dev/shm | tail -1; exec sleep 600");
      Eventually.until("rank0's first line", Duration.ofSeconds(60), () -> !cri.logs(gpu, "rank0", 0).isEmpty());
      assertThat(cri.logs(gpu, "rank0", 0).get(0)).as("1 GiB in KiB").contains(" 1048576 ");
      assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).contains(" " + cri.sandboxShm(gpu) + " ");
      Eventually.until("remount_grown in the journal", Duration.ofSeconds(30),
          () -> !Journald.entries("SHMGUARD_EVENT", "remount_grown").isEmpty());
      JsonNode grown = Journald.entries("SHMGUARD_EVENT", "remount_grown").get(0);
      assertThat(grown.get("MESSAGE").asText()).startsWith("grew pod:" + uid + ":/dev/shm from 64.0M to 1.0G");
      assertThat(Cmd.run("df", "-k", cri.sandboxShm(gpu).toString())).as("the sandbox's tmpfs, for every container of the pod")
          .contains(" 1048576 ");

      ContainerdCri.Pod plain = cri.runPod("training", "plain-0", "4d5e6f70-8b9c-4dae-9f01-2b3c4d5e6f70", false);
      String id = cri.run(plain, "main", 0, "sh", "-c", "df -k /dev/shm | tail -1; exec sleep 600");
      Eventually.until("main's first line", Duration.ofSeconds(60), () -> !cri.logs(plain, "main", 0).isEmpty());
      assertThat(cri.logs(plain, "main", 0).get(0)).as("no GPU: 64 MiB").contains(" 65536 ");
      Path bundle = cri.stateDir().resolve("io.containerd.runtime.v2.task/k8s.io").resolve(id);
      assertThat(Files.readString(bundle.resolve("config.json"))).as("no hook added").doesNotContain("createRuntime");
    } finally {
      if (daemon != null) {
        daemon.destroy();
        daemon.waitFor(60, TimeUnit.SECONDS);
      }
      Cmd.run("rm", "-rf", RUN.toString());
    }
  }
}
