package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A one-node Kubernetes for tests: etcd and the kube-apiserver of {@link ApiServerCluster}, a
 * private containerd 1.6 with its CRI plugin ({@link ContainerdCri}) and the kubelet 1.20.2 that
 * src/test/k8s-apiserver/build-kube-apiserver.sh builds from Debian 12's kubernetes source
 * package (cached beside the API server), all in the test sandbox's mount and PID namespaces and
 * in a network namespace of their own, where the node has the address {@link #ADDRESS} on a veth
 * pair and no route out. Pods are bound by {@code spec.nodeName} (no scheduler) and run on the
 * node's network ({@code hostNetwork: true}); images are the two {@link ContainerdCri} imports.
 *
 * <pre>{@code
 * try (KubeletNode node = KubeletNode.start()) {
 *   node.create(podJson);                       // kubectl create -f, with spec.nodeName set
 *   JsonNode pod = node.pod("llama-0");          // kubectl get pod -o json
 *   Path dshm = node.emptyDir(uid, "dshm");      // /var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/dshm
 * }
 * }</pre>
 *
 * <p>What the kubelet needs on this machine (cgroup v1, root without CAP_SYS_RESOURCE) and how it
 * is kept off the machine: {@code oomScoreAdj: 0} (containerd: {@code restrict_oom_score_adj});
 * {@code cgroupDriver: cgroupfs} under the containerd set-up's own {@code cgroupRoot}, made here
 * and removed with it; private files bind-mounted over the three sysctls the kubelet writes
 * ({@code vm.overcommit_memory}, {@code kernel.panic}, {@code kernel.panic_on_oops}) in the
 * sandbox's /proc; a private tmpfs over each path it hard-codes ({@code /var/lib/kubelet},
 * {@code /var/log/pods}, {@code /var/log/containers}) and over libcni's cache
 * {@code /var/lib/cni} (empty directories made for the mounts where missing, removed at
 * {@link #close}); its volume plugin and certificate directories in the set-up's own. /run,
 * /dev/shm and {@code /opt/containerd} are the sandbox's or containerd's own; the sandbox's
 * /dev/shm, the node's, is made shared (as systemd makes a node's mounts; with the rest of /dev,
 * in the sandbox's mount namespace only, private again at {@link #close}) while the node runs, so
 * that a pod may mount it with {@code mountPropagation: HostToContainer}.
 * {@link #close} deletes the pods (the kubelet stops their sandboxes), ends the kubelet,
 * containerd, kube-apiserver and etcd by pid, and removes every mount, cgroup, directory and the
 * network namespace.
 */
public final class KubeletNode implements AutoCloseable {
  /** The node's name and address: its own, in the node's network namespace, not loopback (the kubelet refuses that). */
  public static final String NAME = "shmguard-node";
  public static final String ADDRESS = "10.77.0.1";
  private static final ObjectMapper JSON = new ObjectMapper();
  /** The kubelet's hard-coded paths, and libcni's result cache (containerd's CNI calls write /var/lib/cni/results). */
  private static final List<Path> HARD_CODED = List.of(Path.of("/var/lib/kubelet"), Path.of("/var/log/pods"),
      Path.of("/var/log/containers"), Path.of("/var/lib/cni"));
  private static final Path DEV = Path.of("/dev");
  /** The sysctls kubelet 1.20 sets (setupKernelTunables) that differ here from what it wants, and what it writes. */
  private static final List<String> SYSCTLS = List.of("vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops");

  private final Path dir;
  private final Path netns;
  private final List<Path> madeDirs = new ArrayList<>();
  private final List<Path> mounts = new ArrayList<>();
  private ApiServerCluster cluster;
  private ContainerdCri cri;
  private Process kubelet;
  private long readyMillis;
  private boolean closed;
  private boolean sharedShm;

  private KubeletNode(Path dir) {
    this.dir = dir;
    this.netns = dir.resolve("netns");
  }

  /**
   * Starts the node and waits for it to be Ready (five minutes at most); skips the caller where
   * the binaries cannot be had (see {@link ApiServerCluster#binaries}) or containerd is missing.
   */
  public static KubeletNode start() throws Exception {
    Sandbox.require();
    assumeTrue(ContainerdCri.installed(), "needs containerd 1.6, runc, golang-go and busybox-static");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/nsenter")) && Files.isExecutable(Path.of("/usr/sbin/ip")),
        "needs nsenter (util-linux) and ip (iproute2)");
    Path binaries = ApiServerCluster.binaries();
    assumeTrue(Files.isExecutable(binaries.resolve("kubelet")), "the build script made no kubelet in " + binaries);
    KubeletNode node = new KubeletNode(Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "kubelet-"));
    try {
      node.startAll(binaries);
      return node;
    } catch (Exception | Error e) {
      node.close();
      throw e;
    }
  }

  private void startAll(Path binaries) throws Exception {
    network();
    List<String> inNode = List.of("/usr/bin/nsenter", "--net=" + netns, "--");
    cluster = ApiServerCluster.start(binaries, null, inNode);
    cri = ContainerdCri.start(null, inNode, "4g");
    // A network for pods not on the node's: its presence makes the runtime's network ready, hence the node.
    Files.writeString(cri.dir().resolve("cni/10-shmguard-test.conflist"), """
        {"cniVersion": "0.4.0", "name": "shmguard-test", "plugins": [{"type": "bridge", "bridge": "cni0",
          "isGateway": true, "ipMasq": false, "ipam": {"type": "host-local", "dataDir": "%s",
          "ranges": [[{"subnet": "10.78.0.0/24"}]]}}]}
        """.formatted(dir.resolve("cni-ipam")));
    cgroupRoot(cri.cgroupParent());
    for (String s : SYSCTLS) {
      Path file = dir.resolve("sysctl-" + s.replace('/', '-'));
      Files.writeString(file, Files.readString(Path.of("/proc/sys", s)));
      bind(file, Path.of("/proc/sys", s));
    }
    for (Path p : HARD_CODED) {
      if (!Files.exists(p)) {
        Files.createDirectories(p);
        madeDirs.add(p);
      }
      Cmd.run("mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "shmguard-test-kubelet", p.toString());
      mounts.add(p);
      // Shared, as under systemd: containerd 1.6 judges the first of the mounts stacked at a path (this
      // one, under the kubelet's own rshared bind of its root) for a HostToContainer mount.
      Cmd.run("mount", "--make-shared", p.toString());
    }
    // The node's /dev/shm (the sandbox's tmpfs) shared, as a node's mounts are under systemd: the
    // runtime refuses a HostToContainer (rslave) mount of a private one. All of /dev, recursively:
    // the sandbox's tmpfs lies over the machine's /dev/shm mounts (private copies here), and
    // containerd 1.6 judges the first of the mounts stacked at the path.
    Cmd.run("mount", "--make-rshared", DEV.toString());
    sharedShm = true;
    Files.writeString(dir.resolve("kubelet.yaml"), """
        apiVersion: kubelet.config.k8s.io/v1beta1
        kind: KubeletConfiguration
        address: %s
        readOnlyPort: 0
        authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
        authorization: {mode: AlwaysAllow}
        cgroupDriver: cgroupfs
        cgroupRoot: %s
        cgroupsPerQOS: true
        oomScoreAdj: 0
        failSwapOn: false
        makeIPTablesUtilChains: false
        resolvConf: ""
        evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", nodefs.inodesFree: "1%%", imagefs.available: "1%%"}
        imageGCHighThresholdPercent: 100
        featureGates: {SizeMemoryBackedVolumes: true}
        """.formatted(ADDRESS, cri.cgroupParent()));
    Files.writeString(dir.resolve("kubeconfig"), """
        apiVersion: v1
        kind: Config
        clusters: [{name: test, cluster: {server: "%s", certificate-authority: "%s"}}]
        users: [{name: node, user: {token: "%s"}}]
        contexts: [{name: test, context: {cluster: test, user: node}}]
        current-context: test
        """.formatted(cluster.server(), cluster.dir().resolve("ca.crt"), cluster.token()));
    List<String> cmd = new ArrayList<>(inNode);
    cmd.addAll(List.of(binaries.resolve("kubelet").toString(), "--config=" + dir.resolve("kubelet.yaml"),
        "--kubeconfig=" + dir.resolve("kubeconfig"), "--container-runtime=remote",
        "--container-runtime-endpoint=unix://" + cri.socket(), "--node-ip=" + ADDRESS, "--hostname-override=" + NAME,
        "--root-dir=/var/lib/kubelet", "--cert-dir=" + dir.resolve("pki"),
        "--volume-plugin-dir=" + dir.resolve("volume-plugins"), "--logtostderr=true", "--v=2"));
    long t0 = System.nanoTime();
    kubelet = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("kubelet.log").toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    Eventually.until(() -> "node " + NAME + " Ready; the kubelet's log ends:\n" + logTail(), Duration.ofMinutes(5), () -> {
      if (!kubelet.isAlive()) {
        throw new AssertionError("the kubelet exited (" + kubelet.exitValue() + "):\n" + logTail());
      }
      return "True".equals(kubectl("get", "node", NAME, "-o",
          "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}").out().strip());
    });
    readyMillis = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf("kubelet node Ready %d ms after the kubelet started (containerd answered in %d ms)%n", readyMillis,
        cri.startMillis());
  }

  /** A network namespace bound at {@code netns}, with loopback and a veth pair carrying {@link #ADDRESS}, the default route on it. */
  private void network() throws IOException {
    Files.createFile(netns);
    Cmd.run("unshare", "--net=" + netns, "true");
    mounts.add(netns);
    for (String c : List.of("ip link set lo up", "ip link add node0 type veth peer name node1",
        "ip addr add " + ADDRESS + "/24 dev node0", "ip link set node0 up", "ip link set node1 up",
        "ip route add default dev node0")) {
      List<String> cmd = new ArrayList<>(List.of("nsenter", "--net=" + netns, "--"));
      cmd.addAll(List.of(c.split(" ")));
      Cmd.run(cmd.toArray(String[]::new));
    }
  }

  /** Makes {@code top} in every cgroup hierarchy (the kubelet refuses a cgroupRoot that does not exist), cpuset's with the root's cpus and mems. */
  private static void cgroupRoot(String top) throws IOException {
    try (Stream<Path> hierarchies = Files.list(Path.of("/sys/fs/cgroup"))) {
      for (Path h : hierarchies.toList()) {
        if (!Files.exists(h.resolve("cgroup.procs")) || Files.isSymbolicLink(h)) {
          continue;
        }
        Path d = Files.createDirectories(h.resolve(top.substring(1)));
        if (Files.exists(d.resolve("cpuset.cpus"))) {
          Files.writeString(d.resolve("cpuset.cpus"), Files.readString(h.resolve("cpuset.cpus")));
          Files.writeString(d.resolve("cpuset.mems"), Files.readString(h.resolve("cpuset.mems")));
        }
      }
    }
  }

  private void bind(Path file, Path over) {
    Cmd.run("mount", "--bind", file.toString(), over.toString());
    mounts.add(over);
  }

  /** How long the kubelet took from its start to the node's Ready condition. */
  public long readyMillis() {
    return readyMillis;
  }

  /** The containerd the kubelet runs pods on. */
  public ContainerdCri runtime() {
    return cri;
  }

  /** Runs kubectl as the cluster's admin with {@code args} in the node's network namespace. */
  public Cmd.Result kubectl(String... args) {
    return cluster.kubectl(args);
  }

  /** Creates {@code object} (a Pod's spec bound to this node first) in its namespace; its uid. */
  public String create(JsonNode object) throws IOException {
    if (object.path("kind").asText().equals("Pod")) {
      ((ObjectNode) object.get("spec")).put("nodeName", NAME);
    }
    Path file = Files.createTempFile(dir, "object-", ".json");
    Files.writeString(file, JSON.writeValueAsString(object));
    Cmd.Result r = kubectl("create", "-f", file.toString(), "-o", "jsonpath={.metadata.uid}");
    if (r.status() != 0) {
      throw new AssertionError("kubectl create: " + r.err() + r.out());
    }
    return r.out().strip();
  }

  /** The pod {@code name} of namespace default as the API server has it. */
  public JsonNode pod(String name) {
    return pod("default", name);
  }

  /** The pod {@code name} of {@code namespace} as the API server has it. */
  public JsonNode pod(String namespace, String name) {
    Cmd.Result r = kubectl("get", "pod", "-n", namespace, name, "-o", "json");
    if (r.status() != 0) {
      throw new AssertionError("kubectl get pod " + name + ": " + r.err());
    }
    try {
      return JSON.readTree(r.out());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes pod {@code name} of namespace default and waits until the kubelet has stopped it and the API server has dropped it. */
  public void delete(String name) {
    delete("default", name);
  }

  /** As {@link #delete(String)}, in {@code namespace}. */
  public void delete(String namespace, String name) {
    long t0 = System.nanoTime();
    Cmd.Result r = kubectl("delete", "pod", "-n", namespace, name, "--grace-period=1", "--wait=true", "--timeout=120s");
    if (r.status() != 0) {
      throw new AssertionError("kubectl delete pod " + name + ": " + r.err() + "\n" + logTail());
    }
    System.out.printf("kubelet node: pod %s/%s deleted in %d ms%n", namespace, name, (System.nanoTime() - t0) / 1_000_000);
  }

  /** Where the kubelet mounts the pod's emptyDir {@code volume}: {@code /var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/<volume>}. */
  public static Path emptyDir(String uid, String volume) {
    return Path.of("/var/lib/kubelet/pods", uid, "volumes/kubernetes.io~empty-dir", volume);
  }

  /**
   * Seed 002's pod {@code name}: one container that counts its attempts on the disk emptyDir
   * {@code count}, waits {@code startupSeconds} (a training process's imports and CUDA start-up
   * before NCCL sets up), logs what /dev/shm holds, writes 40 MiB to
   * {@code nccl-<prefix><attempt>} there and holds it; attempts 1 and 2 exit 1 two seconds
   * later, attempt 3 runs on. Each attempt touches {@code started<n>} and {@code exited<n>} on
   * {@code count} (their times are its start and exit). With {@code memoryEmptyDir}, /dev/shm is
   * an emptyDir {@code {medium: Memory, sizeLimit: 64Mi}}; otherwise the sandbox's (64 MiB too).
   */
  public static ObjectNode seed002Pod(String name, String prefix, boolean memoryEmptyDir, int startupSeconds) {
    String script = "n=$(( $(cat /count/n 2>/dev/null || echo 0) + 1 )); echo $n > /count/n; : > /count/started$n; "
        + "sleep " + startupSeconds + "; seen=$(ls /dev/shm); f=/dev/shm/nccl-" + prefix + "$n; "
        + "if head -c 41943040 /dev/zero > $f 2>/dev/null; then w=ok; else w=\"failed at $(stat -c %s $f) bytes\"; fi; "
        + "echo \"attempt $n sees: [$seen] write: $w\" >> /count/log; exec 3<$f; "
        + "if [ $n -le 2 ]; then sleep 2; : > /count/exited$n; exit 1; fi; exec sleep 3600";
    return pod(name, script, memoryEmptyDir);
  }

  /**
   * A pod {@code name} in namespace default whose one container ({@link ContainerdCri#IMAGE}, on
   * the node's network, restarted always) runs {@code script} with sh, after {@code n=<attempt>}
   * is set and written to {@code /count/n} and {@code /count/started<n>} touched: {@code /count}
   * is a disk emptyDir ({@link #count}) that outlives the attempts. With {@code memoryEmptyDir},
   * /dev/shm is an emptyDir {@code dshm} {@code {medium: Memory, sizeLimit: 64Mi}}; otherwise the
   * sandbox's.
   */
  public static ObjectNode attemptsPod(String name, String script, boolean memoryEmptyDir) {
    return pod(name, "n=$(( $(cat /count/n 2>/dev/null || echo 0) + 1 )); echo $n > /count/n; : > /count/started$n; "
        + script, memoryEmptyDir);
  }

  private static ObjectNode pod(String name, String script, boolean memoryEmptyDir) {
    ObjectNode pod = JSON.createObjectNode().put("apiVersion", "v1").put("kind", "Pod");
    pod.putObject("metadata").put("name", name).put("namespace", "default");
    ObjectNode spec = pod.putObject("spec").put("hostNetwork", true).put("dnsPolicy", "Default")
        .put("restartPolicy", "Always").put("terminationGracePeriodSeconds", 1);
    ObjectNode c = spec.putArray("containers").addObject().put("name", "trainer").put("image", ContainerdCri.IMAGE)
        .put("imagePullPolicy", "Never");
    c.putArray("command").add("sh").add("-c").add(script);
    ArrayNode mounts = c.putArray("volumeMounts");
    mounts.addObject().put("name", "count").put("mountPath", "/count");
    ArrayNode volumes = spec.putArray("volumes");
    volumes.addObject().put("name", "count").putObject("emptyDir");
    if (memoryEmptyDir) {
      mounts.addObject().put("name", "dshm").put("mountPath", "/dev/shm");
      volumes.addObject().put("name", "dshm").putObject("emptyDir").put("medium", "Memory").put("sizeLimit", "64Mi");
    }
    return pod;
  }

  /** The disk emptyDir {@code count} of a {@link #seed002Pod}, where its attempts leave their log and times. */
  public static Path count(String uid) {
    return emptyDir(uid, "count");
  }

  /** The first {@code n} lines a {@link #seed002Pod}'s attempts logged, once there are that many (three minutes at most). */
  public List<String> attempts(String uid, int n) {
    Path log = count(uid).resolve("log");
    Eventually.until(() -> n + " attempts logged in " + log + ":\n" + logTail(), Duration.ofMinutes(3),
        () -> lines(log).size() >= n);
    return lines(log).subList(0, n);
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      return List.of();
    }
  }

  /** The kubelet's last lines, for a failure message. */
  public String logTail() {
    return LogTail.of(dir.resolve("kubelet.log"), 40);
  }

  /** Deletes every pod, then ends the kubelet, containerd, the control plane, and removes the mounts, cgroups and directories. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (kubelet != null && kubelet.isAlive()) {
        kubectl("delete", "pods", "--all", "--all-namespaces", "--grace-period=1", "--wait=true", "--timeout=120s");
      }
      if (kubelet != null) {
        kubelet.destroy();
        if (!kubelet.waitFor(30, TimeUnit.SECONDS)) {
          kubelet.destroyForcibly().waitFor();
        }
      }
      if (cri != null) {
        cri.close();
      }
      if (cluster != null) {
        cluster.close();
      }
      if (sharedShm) {
        Cmd.run("mount", "--make-rprivate", DEV.toString());
      }
      for (int i = mounts.size() - 1; i >= 0; i--) {
        RuntimeTeardown.unmountUnder(mounts.get(i));
      }
      for (Path p : madeDirs) {
        Files.deleteIfExists(p);
      }
      RuntimeTeardown.delete(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
