package org.shmguard.it.containers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Docker;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Journald;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;

/**
 * Zero-touch sizing on Docker 20.10, which reads no hooks.d and has no CDI: the runtime
 * packaging/share/oci-runtime, registered in dockerd's daemon.json as {@code shmguard}, adds the
 * OCI hook to a GPU container's config.json and executes runc. A container started with
 * {@code --runtime=shmguard --shm-size=64m} and four GPUs sees, at its first instruction, the
 * /dev/shm the daemon grew for it; one without a GPU gets no hook and keeps its 64 MiB.
 */
class DockerRuntimeHookTest {
  private static final Path CHECKOUT = Path.of("").toAbsolutePath();
  /** Where the hook asks by default: the sandbox's own /run. */
  private static final Path RUN = Path.of("/run/shmguard");
  /** systemd/shmguard.service's CapabilityBoundingSet. */
  private static final String UNIT_CAPS = "+sys_ptrace,+dac_read_search,+dac_override,+fowner,+lease,+sys_admin";
  private static Docker docker;

  @BeforeAll
  static void startDocker() {
    Sandbox.require();
    assumeTrue(Docker.installed(), "needs docker.io (dockerd 20.10, /usr/sbin/dockerd)");
    docker = Docker.start(CHECKOUT.resolve("packaging/share/oci-runtime"));
  }

  @AfterAll
  static void stopDocker() {
    if (docker != null) {
      docker.close();
    }
  }

  @Test
  void aGpuContainerStartedWithTheShmguardRuntimeSeesItsShmGrownAtItsFirstInstruction() throws Exception {
    Files.createDirectories(RUN);
    Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 1h\n  requireHostPidNamespace: false\n"
        + "daemon:\n  interval: 1s\n  rediscover: 1s\nadvice:\n  socket: " + RUN.resolve("advice.sock") + "\n  envFile: "
        + RUN.resolve("advice.env") + "\nremount:\n  enabled: true\n  targetSize: 1G\n  maxSize: 2G\n"
        + "runtimes:\n  kubeletRoot: \"\"\n  dockerRoot: " + docker.dataRoot() + "\n  containerStorage: []\n");
    Process daemon = null;
    try (Journald journald = Journald.start()) {
      // As the shipped unit runs it: its capability bounding set, no new privileges, UMask=0077.
      daemon = new ProcessBuilder("sh", "-c", "umask 0077; exec \"$@\"", "sh", "setpriv", "--no-new-privs", "--inh-caps", "-all",
          "--bounding-set", "-all," + UNIT_CAPS, Sandbox.javaBinary(), "-XX:TieredStopAtLevel=1", "-cp",
          System.getProperty("java.class.path"), "org.shmguard.cli.Main", "daemon", "-c", config.toString())
          .redirectErrorStream(true).redirectOutput(docker.dir().resolve("shmguard.log").toFile()).start();
      Eventually.until("the advice socket", Duration.ofSeconds(60), () -> Files.exists(RUN.resolve("advice.sock")));

      List<String> gpus = new ArrayList<>(List.of("-e", "NVIDIA_VISIBLE_DEVICES=0,1,2,3"));
      String four = run("four", gpus);
      assertThat(four).as("1 GiB in KiB").contains(" 1048576 ");
      String id = docker.ok("inspect", "-f", "{{.Id}}", "four");
      Eventually.until("remount_grown in the journal", Duration.ofSeconds(30),
          () -> Journald.entries("SHMGUARD_EVENT", "remount_grown").stream()
              .anyMatch(e -> e.path("SHM_MOUNT").asText().equals("docker:" + id.substring(0, 12) + ":/dev/shm")));
      JsonNode grown = Journald.entries("SHMGUARD_EVENT", "remount_grown").get(0);
      assertThat(grown.get("MESSAGE").asText()).startsWith("grew docker:" + id.substring(0, 12) + ":/dev/shm from 64.0M to 1.0G");

      String plain = docker.runDetached(List.of("--runtime=shmguard", "--shm-size=64m"), "sleep", "600");
      assertThat(docker.ok("exec", plain, "sh", "-c", "df -k /dev/shm | tail -1")).as("no GPU: 64 MiB").contains(" 65536 ");
      Path bundles = docker.dir().resolve("exec/containerd/daemon/io.containerd.runtime.v2.task/moby");
      assertThat(Files.readString(bundles.resolve(plain).resolve("config.json"))).as("no hook added").doesNotContain("createRuntime");
      docker.ok("rm", "-f", plain);
    } finally {
      if (daemon != null) {
        daemon.destroy();
        daemon.waitFor(60, TimeUnit.SECONDS);
      }
      docker.client("rm", "-f", "four");
      Cmd.run("rm", "-rf", RUN.toString());
    }
  }

  /** Runs {@code df -k /dev/shm} in a container named {@code name} with the shmguard runtime and 64 MiB; its output. */
  private static String run(String name, List<String> options) {
    List<String> args = new ArrayList<>(List.of("run", "--name", name, "--runtime=shmguard", "--network=none", "--shm-size=64m"));
    args.addAll(options);
    args.addAll(List.of(Docker.IMAGE, "sh", "-c", "df -k /dev/shm | tail -1"));
    return docker.ok(args.toArray(String[]::new));
  }
}
