package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.KubeletNode;
import org.shmguard.testing.Sandbox;

/**
 * The shipped DaemonSet's pod template (packaging/kubernetes/base/daemonset.yaml, its ConfigMap
 * with one key added) run as a pod by a real kubelet ({@link KubeletNode}) on containerd, from the
 * image build-image.sh builds (the archive ContainerImageTest makes, reused when newer than the
 * .deb): hostPID, its five capabilities, its hostPath mounts with HostToContainer propagation, a
 * memory emptyDir at /tmp, on a pod network (bridge CNI) where the kubelet's readiness and liveness
 * probes reach its metrics port. It then guards seed 002 on the same node: a crash-looping pod's
 * leaks in its memory emptyDir are reaped by the pod's shmguard before each next attempt makes its
 * own, as its log says, and it answers on the advice socket it made on the node.
 */
class KubeletDaemonSetTest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Path BUILD = Path.of("packaging/kubernetes/build-image.sh");
  private static final String IMAGE = "shmguard.test/shmguard:1";
  /** As in ContainerImageTest: the sandbox's PID namespace stands for the node's, but is not the kernel's first. */
  private static final String SANDBOX_CONFIG = "reap:\n  requireHostPidNamespace: false\n";

  @Test
  void theDaemonSetsPodRunsOnTheKubeletAndReapsACrashLoopingPodsLeaksBeforeEachRestart() throws Exception {
    Sandbox.require();
    Path archive = image();
    Path advice = Path.of("/run/shmguard");
    boolean hadAdvice = Files.exists(advice);
    try (KubeletNode node = KubeletNode.start()) {
      node.runtime().importArchive(archive, IMAGE);
      ok(node.kubectl("create", "namespace", "shmguard"));
      ok(node.kubectl("label", "node", KubeletNode.NAME, "nvidia.com/gpu.present=true"));
      ObjectNode configMap = (ObjectNode) YAML.readTree(DaemonSetPod.CONFIG_MAP.toFile());
      ((ObjectNode) configMap.get("metadata")).put("namespace", "shmguard");
      ObjectNode data = (ObjectNode) configMap.get("data");
      data.put("shmguard.yaml", data.get("shmguard.yaml").asText() + SANDBOX_CONFIG);
      node.create(configMap);

      JsonNode template = YAML.readTree(DaemonSetPod.MANIFEST.toFile()).path("spec").path("template");
      ObjectNode pod = YAML.createObjectNode().put("apiVersion", "v1").put("kind", "Pod");
      ObjectNode meta = pod.putObject("metadata").put("name", "shmguard-node").put("namespace", "shmguard");
      meta.set("labels", template.path("metadata").path("labels"));
      ObjectNode spec = (ObjectNode) template.get("spec").deepCopy();
      ((ObjectNode) spec.get("containers").get(0)).put("image", IMAGE);
      pod.set("spec", spec);
      long created = System.nanoTime();
      node.create(pod);
      Eventually.until(() -> "shmguard-node Ready: " + node.pod("shmguard", "shmguard-node").path("status") + "\n"
          + node.logTail(), Duration.ofMinutes(3), () -> ready(node.pod("shmguard", "shmguard-node")));
      long readyMillis = (System.nanoTime() - created) / 1_000_000;

      JsonNode status = node.pod("shmguard", "shmguard-node").path("status");
      assertThat(status.path("podIP").asText()).as("on the pod network").startsWith("10.78.0.");
      String containerId = status.path("containerStatuses").get(0).path("containerID").asText().replace("containerd://", "");
      int pid = node.runtime().pid(containerId);
      String procStatus = Files.readString(Path.of("/proc/" + pid + "/status"));
      assertThat(field(procStatus, "NSpid")).as("hostPID: the node's PID namespace").isEqualTo(String.valueOf(pid));
      assertThat(field(procStatus, "CapEff")).isEqualTo(field(procStatus, "CapBnd")).isEqualTo("000000001008000e");
      assertThat(field(procStatus, "NoNewPrivs")).isEqualTo("1");
      Path socket = Path.of("/run/shmguard/advice.sock");
      assertThat(socket).as("the advice socket, made on the node through the hostPath").exists();

      // Seed 002 under the pod's shmguard, with the shipped timings (rediscover 5s, events, holder exits by pidfd):
      // each attempt starts its NCCL work 8 s after it starts, once the daemon has found the pod's new tmpfs.
      String uid = node.create(KubeletNode.seed002Pod("llama-1", "Dst00", true, 8));
      assertThat(node.attempts(uid, 3)).containsExactly("attempt 1 sees: [] write: ok", "attempt 2 sees: [] write: ok",
          "attempt 3 sees: [] write: ok");
      String logs = ok(node.kubectl("logs", "-n", "shmguard", "shmguard-node"));
      for (String file : List.of("nccl-Dst001", "nccl-Dst002")) {
        assertThat(logs.lines().filter(l -> l.contains("SHMGUARD_EVENT=segment_reaped") && l.contains("SHM_SEGMENT=" + file + " ")))
            .as(logs).singleElement().satisfies(l -> assertThat(l).contains("SHM_POD_NAME=llama-1").contains("SHM_POD_UID=" + uid));
      }
      assertThat(logs).doesNotContain("SHM_SEGMENT=nccl-Dst003 ");
      Cmd.Result check = Cmd.exec("python3", "-I", "-S", "packaging/share/shmguard_client.py", "check", "--socket",
          socket.toString());
      assertThat(check.status()).as(check.out() + check.err()).isZero();
      assertThat(check.out()).as("the daemon's view, on the socket: the crash pod's volume among the node's mounts")
          .startsWith("ok: ").contains("pod:" + uid + ":");
      node.delete("llama-1");

      JsonNode last = node.pod("shmguard", "shmguard-node");
      assertThat(ready(last)).isTrue();
      assertThat(last.path("status").path("containerStatuses").get(0).path("restartCount").asInt())
          .as("the liveness probe never failed").isZero();
      System.out.printf("the DaemonSet's pod on the kubelet: Ready %d ms after its creation, node Ready in %d ms%n", readyMillis,
          node.readyMillis());
    } finally {
      if (!hadAdvice) {
        Cmd.exec("rm", "-rf", "--one-file-system", advice.toString());
      }
    }
  }

  /** The image archive in target/: the newest made after the .deb, or built now (65 to 90 s) with buildah as ContainerImageTest builds it. */
  private static Path image() throws Exception {
    for (String tool : new String[] {"/usr/bin/buildah", "/usr/bin/podman", "/usr/sbin/runc", "/usr/sbin/debootstrap",
        "/usr/bin/python3"}) {
      assumeTrue(Files.isExecutable(Path.of(tool)), tool + " is not installed (.ci/run installs it)");
    }
    long deb = Files.getLastModifiedTime(Packages.deb()).toMillis();
    try (Stream<Path> files = Files.list(Path.of("target"))) {
      Optional<Path> built = files.filter(p -> p.getFileName().toString().matches("shmguard-image_.*\\.oci\\.tar"))
          .filter(p -> p.toFile().lastModified() > deb).max((a, b) -> Long.compare(a.toFile().lastModified(), b.toFile().lastModified()));
      if (built.isPresent()) {
        return built.get();
      }
    }
    try (ContainerEngine engine = ContainerEngine.start()) {
      Cmd.Result build = engine.run(List.of(BUILD.toString()), 3600);
      assertThat(build.status()).as(build.out()).isZero();
      Matcher m = Pattern.compile("(?m)^IMAGE (\\S+) (\\S+)$").matcher(build.out());
      assertThat(m.find()).as(build.out()).isTrue();
      return Path.of(m.group(1));
    }
  }

  private static boolean ready(JsonNode pod) {
    for (JsonNode c : pod.path("status").path("conditions")) {
      if (c.path("type").asText().equals("Ready")) {
        return c.path("status").asText().equals("True");
      }
    }
    return false;
  }

  private static String ok(Cmd.Result r) {
    assertThat(r.status()).as(r.err() + r.out()).isZero();
    return r.out();
  }

  private static String field(String status, String name) {
    return status.lines().filter(l -> l.startsWith(name + ":")).map(l -> l.substring(name.length() + 1).trim())
        .findFirst().orElseThrow();
  }
}
