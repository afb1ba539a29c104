package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;

/**
 * The container image built for real and run as the DaemonSet runs it. build-image.sh builds
 * packaging/kubernetes/Containerfile with Debian's buildah on a debootstrapped Debian 12 root (no
 * registry pull) into an OCI archive in target/; the test loads that archive into Debian's podman
 * (runc, storage on a tmpfs of the sandbox's own) and runs it with the options {@link
 * DaemonSetPod} reads from daemonset.yaml: the sandbox's PID namespace as the host's, the
 * manifest's capabilities, read-only root, limits and volumes (hostPath /dev/shm is the
 * sandbox's own /dev/shm), probing it as the kubelet would. A leak left in the sandbox's /dev/shm
 * by a SIGKILLed holder must be reaped.
 */
class ContainerImageTest {
  private static final Path BUILD = Path.of("packaging/kubernetes/build-image.sh");
  private static final Path CONTAINERFILE = Path.of("packaging/kubernetes/Containerfile");
  /**
   * The one key added to the shipped ConfigMap. The sandbox's PID namespace stands for the node's
   * but is not the kernel's initial one, which the daemon otherwise requires before it reaps
   * (it logs "not in the host's PID namespace" and reaps nothing); every process that can reach
   * the sandbox's /dev/shm is in it, the case this key exists for.
   */
  private static final String SANDBOX_CONFIG = "reap:\n  requireHostPidNamespace: false\n";

  @Test
  void imageBuiltFromTheContainerfileRunsAsTheDaemonSetAndReapsALeakInTheSandbox() throws Exception {
    Sandbox.require();
    for (String tool : new String[] {"/usr/bin/buildah", "/usr/bin/podman", "/usr/sbin/runc", "/usr/sbin/debootstrap",
        "/usr/bin/nsenter", "/usr/bin/python3"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (.ci/run installs it)");
    }
    Packages.deb();
    DaemonSetPod pod = DaemonSetPod.load();

    boolean hadLocks = Files.exists(Path.of("/dev/shm/libpod_lock"));
    Path store;
    String cgroupParent;
    try (ContainerEngine engine = ContainerEngine.start()) {
      store = engine.store();
      cgroupParent = engine.cgroupParent();
      Cmd.Result build = engine.run(List.of(BUILD.toString()), 3600);
      assertThat(build.status()).as(build.out()).isZero();
      Matcher built = Pattern.compile("(?m)^IMAGE (\\S+) (\\S+)$").matcher(build.out());
      assertThat(built.find()).as(build.out()).isTrue();
      Path archive = Path.of(built.group(1));
      String image = built.group(2);
      assertThat(archive).isRegularFile().startsWith(Path.of("target"));

      // What an operator gets is the archive alone: nothing from the build is kept.
      engine.podman("rmi", "--all", "--force");
      assertThat(engine.podman("load", "--input", archive.toString())).contains(image);
      String config = engine.podman("image", "inspect", "--format",
          "{{json .Config.Entrypoint}} {{json .Config.Cmd}} {{index .Config.Labels \"org.opencontainers.image.version\"}}",
          image);
      assertThat(config.trim()).isEqualTo(containerfile("ENTRYPOINT") + " " + containerfile("CMD") + " "
          + Cmd.run("dpkg-deb", "-f", Packages.deb().toString(), "Version").trim());

      Path work = Files.createTempDirectory(Sandbox.MOUNTS, "image-test");
      Path kubeletPods = Files.createDirectories(work.resolve("kubelet-pods"));
      Path advice = work.resolve("run-shmguard");
      Files.createDirectories(advice);
      // The sandbox's /dev/shm (a tmpfs of its own) is the node's: init's mount namespace shows
      // it there, and the container reaches it through /host/dev/shm.
      Path podLogs = Files.createDirectories(work.resolve("pod-logs"));
      Map<String, Path> hostPaths = Map.of("/dev/shm", Path.of("/dev/shm"), "/var/lib/kubelet/pods", kubeletPods,
          "/var/log/pods", podLogs, "/run/shmguard", advice);
      Path leak = Path.of("/dev/shm/nccl-image" + ProcessHandle.current().pid());
      Files.write(leak, new byte[1 << 16]);
      try (Holder holder = Holder.start("map", leak.toString())) {
        List<String> run = new ArrayList<>(List.of("run", "--detach", "--name", "shmguard-node",
            "--cgroup-parent=" + engine.cgroupParent()));
        run.addAll(pod.podmanOptions(hostPaths, work, SANDBOX_CONFIG));
        run.add(image);
        run.addAll(pod.args());
        engine.podman(run.toArray(String[]::new));
        long started = System.nanoTime();
        int pid = Integer.parseInt(engine.podman("inspect", "--format", "{{.State.Pid}}", "shmguard-node").trim());

        // As the DaemonSet asks: the manifest's five capabilities only, no new privileges, root read-only.
        String status = Files.readString(Path.of("/proc/" + pid + "/status"));
        assertThat(field(status, "CapEff")).isEqualTo(field(status, "CapBnd")).isEqualTo("000000001008000e");
        assertThat(field(status, "NoNewPrivs")).isEqualTo("1");
        assertThat(Files.readString(Path.of("/proc/" + pid + "/mountinfo")).lines()
            .filter(l -> l.split(" ")[4].equals("/")).findFirst().orElseThrow()).matches("\\S+ \\S+ \\S+ \\S+ / ro,.*");

        // The kubelet's readiness probe: at once, then every periodSeconds, until it succeeds.
        DaemonSetPod.HttpProbe ready = pod.readinessProbe();
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (probe(pid, ready) != 200) {
          assertThat(System.nanoTime()).as("readiness probe " + ready + " never 200; logs:\n" + logs(engine))
              .isLessThan(deadline);
          Thread.sleep(Duration.ofSeconds(ready.periodSeconds()).toMillis());
        }
        assertThat(leak).as("held by a live process: never reaped").exists();

        holder.kill();
        Eventually.until(() -> leak + " not reaped; logs:\n" + logs(engine), Duration.ofSeconds(90),
            () -> !Files.exists(leak));
        // A reap after a holder's exit is reported with the next full pass (at most 5 s after it):
        // the journal line follows the unlink.
        java.util.function.Supplier<List<String>> reaped = () -> logs(engine).lines().filter(l -> l.contains(
            "SHMGUARD_EVENT=segment_reaped") && l.contains("SHM_SEGMENT=" + leak.getFileName() + " ")).toList();
        Eventually.until(() -> "no segment_reaped line for " + leak + "; logs:\n" + logs(engine), Duration.ofSeconds(30),
            () -> !reaped.get().isEmpty());
        assertThat(reaped.get()).as(logs(engine)).hasSize(1);
        assertThat(probe(pid, ready)).isEqualTo(200);

        DaemonSetPod.HttpProbe live = pod.livenessProbe();
        long wait = Duration.ofSeconds(live.initialDelaySeconds()).toMillis() - Duration.ofNanos(System.nanoTime() - started).toMillis();
        if (wait > 0) {
          Thread.sleep(wait);
        }
        assertThat(probe(pid, live)).isEqualTo(200);

        // Deleted as the kubelet deletes a pod: SIGTERM, then the grace period.
        Cmd.Result stop = engine.podmanExec("stop", "--time", String.valueOf(pod.terminationGracePeriodSeconds()),
            "shmguard-node");
        assertThat(stop.status()).as(stop.out()).isZero();
        assertThat(engine.podman("inspect", "--format", "{{.State.ExitCode}}", "shmguard-node").trim()).isIn("0", "143");
      } finally {
        Files.deleteIfExists(leak);
      }
    }
    // Nothing left: no mount of the engine's (storage, layers, /var/lib's overlay), no lock file, no cgroup.
    if (!hadLocks) {
      assertThat(Path.of("/dev/shm/libpod_lock")).doesNotExist();
    }
    assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain(store.toString())
        .doesNotContain("shmguard-test-var-lib");
    try (Stream<Path> hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
      assertThat(hierarchies.map(h -> h.resolve(cgroupParent.substring(1)))).noneMatch(Files::exists);
    }
  }

  @Test
  void daemonSetBecomesThePodmanOptionsTheKubeletWouldUse(@TempDir Path work) throws Exception {
    DaemonSetPod pod = DaemonSetPod.load();
    List<String> options = pod.podmanOptions(Map.of("/dev/shm", Path.of("/sandbox/shm"), "/var/lib/kubelet/pods",
        Path.of("/sandbox/pods"), "/var/log/pods", Path.of("/sandbox/logs"), "/run/shmguard", Path.of("/sandbox/advice")),
        work, "");

    assertThat(options).containsExactly("--network=none", "--pid=host", "--user=0", "--security-opt=no-new-privileges",
        "--read-only", "--read-only-tmpfs=false", "--cap-drop=ALL", "--cap-add=SYS_PTRACE", "--cap-add=FOWNER",
        "--cap-add=LEASE", "--cap-add=DAC_READ_SEARCH", "--cap-add=DAC_OVERRIDE", "--memory=256m", "--cpus=0.5",
        "--volume=" + work.resolve("configmap-config") + ":/etc/shmguard:ro",
        "--volume=/sandbox/shm:/host/dev/shm:rw,rslave", "--volume=/sandbox/pods:/var/lib/kubelet/pods:rw,rslave",
        "--volume=/sandbox/logs:/var/log/pods:ro", "--volume=/sandbox/advice:/run/shmguard:rw", "--tmpfs=/tmp:rw,size=16m", "--stop-timeout=30");
    assertThat(work.resolve("configmap-config/shmguard.yaml")).content().contains("listen: \"0.0.0.0:9477\"");
    assertThat(pod.args()).containsExactly("daemon", "--config", "/etc/shmguard/shmguard.yaml");
    assertThat(pod.readinessProbe()).isEqualTo(new DaemonSetPod.HttpProbe("/readyz", 9477, 0, 10, 5, 2));
    assertThat(pod.livenessProbe()).isEqualTo(new DaemonSetPod.HttpProbe("/", 9477, 30, 30, 5, 3));
  }

  @Test
  void buildScriptPassesShellcheck() {
    Packages.requireTool("/usr/bin/shellcheck");
    Cmd.Result r = Cmd.exec("shellcheck", BUILD.toString());
    assertThat(r.status()).as(r.out() + r.err()).isZero();
  }

  /** An httpGet as the kubelet makes it, in the pod's network namespace; the status, or -1 when none came. */
  private static int probe(int pid, DaemonSetPod.HttpProbe p) {
    Cmd.Result r = Cmd.exec("nsenter", "--target", String.valueOf(pid), "--net", "python3", "-c", """
        import sys, urllib.request, urllib.error
        try:
            print(urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])).status)
        except urllib.error.HTTPError as e:
            print(e.code)
        except OSError:
            print(-1)
        """, "http://127.0.0.1:" + p.port() + p.path(), String.valueOf(p.timeoutSeconds()));
    return r.status() == 0 ? Integer.parseInt(r.out().trim()) : -1;
  }

  private static String logs(ContainerEngine engine) {
    return engine.podmanExec("logs", "shmguard-node").out();
  }

  private static String field(String status, String name) {
    return status.lines().filter(l -> l.startsWith(name + ":")).map(l -> l.substring(name.length() + 1).trim())
        .findFirst().orElseThrow();
  }

  /** The JSON array a Containerfile instruction gives (ENTRYPOINT, CMD), as podman prints it. */
  private static String containerfile(String instruction) throws Exception {
    return Files.readAllLines(CONTAINERFILE).stream().filter(l -> l.startsWith(instruction + " "))
        .map(l -> l.substring(instruction.length() + 1).replace(", ", ",")).findFirst().orElseThrow();
  }
}
