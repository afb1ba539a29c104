package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real containerd 1.6 with its CRI plugin for tests, spoken to as a kubelet speaks to it (CRI
 * runtime v1alpha2 over its socket), with no registry. Debian 12's containerd, shim and runc, as
 * root, in the test sandbox's mount and PID namespaces, like {@link Docker}: its root, state
 * directory, sockets, runc root, {@code /opt} plugin directory, CNI configuration directory and
 * configuration file all live in a fresh directory under {@link Sandbox#MOUNTS}; nothing under the
 * machine's /run/containerd, /var/lib/containerd or /etc/cni is read or written (the shims'
 * sockets go to /run/containerd/s, which containerd 1.6 hard-codes, inside the sandbox's private
 * /run). {@code restrict_oom_score_adj = true}: root here lacks CAP_SYS_RESOURCE, and the CRI
 * plugin would otherwise give the pause process -998.
 *
 * <p>Pods run on the node's network ({@code namespace_options.network = NODE}), so no CNI plugin
 * runs. The two images are made here as OCI archives and imported with {@code ctr -n k8s.io
 * images import}: {@link #PAUSE_IMAGE}, the pause binary compiled from Debian 12's kubernetes
 * source ({@code build/pause/linux/pause.c}), and {@link #IMAGE}, busybox-static. The pause binary
 * and the CRI client ({@code shmguard-cri}, crictl not being in Debian 12) are built once by
 * src/test/containerd/build-cri-tools.sh and cached under /var/cache/shmguard/cri-tools.
 *
 * <pre>{@code
 * try (ContainerdCri cri = ContainerdCri.start()) {
 *   ContainerdCri.Pod pod = cri.runPod("training", "llama-0", uid, false);
 *   String id = cri.run(pod, "engine", 0, "sh", "-c", "echo x > /dev/shm/nccl-x; sleep 600");
 *   Path shm = cri.sandboxShm(pod);   // <state>/io.containerd.grpc.v1.cri/sandboxes/<id>/shm
 * }
 * }</pre>
 *
 * <p>Containers' and sandboxes' cgroups go, as kubelet's cgroupfs driver places them, under
 * {@code <parent>/kubepods/besteffort/pod<uid>}, the parent being the set-up's own
 * ({@code /shmguard-test-<dir>}); {@link #close} stops and removes every pod, containerd and its
 * shims (by pid), the mounts, the cgroups and the directory. Start-up is seconds: a test class
 * shares one.
 */
public final class ContainerdCri implements AutoCloseable {
  public static final String PAUSE_IMAGE = "shmguard.test/pause:3.4";
  public static final String IMAGE = "shmguard.test/busybox:1";
  static final Path BUILD_SCRIPT = Path.of("src/test/containerd/build-cri-tools.sh");
  private static final Path DAEMON = Path.of("/usr/bin/containerd");
  private static final Path CTR = Path.of("/usr/bin/ctr");
  private static final Path SHIM = Path.of("/usr/bin/containerd-shim-runc-v2");
  private static final Path RUNC = Path.of("/usr/sbin/runc");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] APPLETS = {"sh", "sleep", "echo", "cat", "printf", "true", "false", "ls", "head", "kill",
      "rm", "stat", "wc", "df", "grep"};
  /** namespace_options values (runtime v1alpha2's NamespaceMode). */
  private static final int POD = 0;
  private static final int CONTAINER = 1;
  private static final int NODE = 2;

  private final Path dir;
  private final Path tools;
  private final String cgroupTop;
  private final Process daemon;
  private final List<Pod> pods = new ArrayList<>();
  private long startMillis;
  private boolean closed;

  /**
   * A pod sandbox as the runtime made it: its id, the configuration it was made with (CRI wants it
   * again for each container), its uid, whether it shares the node's IPC namespace.
   */
  public record Pod(String id, Path config, String namespace, String name, String uid, boolean hostIpc) {}

  private ContainerdCri(Path dir, Path tools, String cgroupTop, Process daemon) {
    this.dir = dir;
    this.tools = tools;
    this.cgroupTop = cgroupTop;
    this.daemon = daemon;
  }

  /** Whether containerd, its runc shim, runc, ctr and what the build script needs are installed. */
  public static boolean installed() {
    return Files.isExecutable(DAEMON) && Files.isExecutable(CTR) && Files.isExecutable(SHIM) && Files.isExecutable(RUNC)
        && Files.isExecutable(Path.of("/usr/bin/go")) && Files.isExecutable(Path.of("/bin/busybox"));
  }

  /**
   * The pause binary and the CRI client, built by {@link #BUILD_SCRIPT} (from scratch a few
   * minutes: it unpacks the kubernetes source package; cached: at once). Skips the caller when
   * they cannot be built here.
   */
  static Path tools() throws IOException, InterruptedException {
    Process p = new ProcessBuilder("bash", BUILD_SCRIPT.toString()).redirectError(ProcessBuilder.Redirect.INHERIT)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assumeTrue(p.waitFor(60, TimeUnit.MINUTES), "building the CRI test tools took over an hour");
    assumeTrue(p.exitValue() == 0, "cannot build the CRI test tools (no deb-src entry or no network?): see the test's stderr");
    return Path.of(out);
  }

  /** Starts a private containerd with the CRI plugin and imports both images; throws if it does not answer within two minutes. */
  public static ContainerdCri start() {
    return start(null);
  }

  /**
   * As {@link #start()}, with {@code runtime} as every pod's OCI runtime, the way an operator
   * chooses it for the CRI plugin: a runtime {@code shmguard} of type io.containerd.runc.v2 whose
   * {@code BinaryName} is {@code runtime}, made the default ({@code default_runtime_name}); null
   * keeps runc.
   */
  public static ContainerdCri start(Path runtime) {
    return start(runtime, List.of());
  }

  /**
   * As {@link #start(Path)}, containerd started through {@code launcher} (a command that ends by
   * executing its arguments, as {@code nsenter --net=FILE --}): a kubelet's node puts it in the
   * node's network namespace, where the pods on the node's network run.
   */
  public static ContainerdCri start(Path runtime, List<String> launcher) {
    return start(runtime, launcher, null);
  }

  /**
   * As {@link #start(Path, List)}, containerd's root (content store, snapshots) on a tmpfs of
   * its own of {@code rootSize} (as "4g"; null: in the set-up's directory, on the sandbox's /run
   * of 512 MiB, room for the busybox images only), unmounted at {@link #close}: room for a larger
   * image (shmguard's, about 190 MB as an archive, unpacked once by the native snapshotter and
   * copied again for each container).
   */
  public static ContainerdCri start(Path runtime, List<String> launcher, String rootSize) {
    Sandbox.require();
    assumeTrue(installed(), "needs containerd 1.6, runc, golang-go and busybox-static");
    Path tools;
    Path dir;
    try {
      tools = tools();
      dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "containerd-");
      for (String d : new String[] {"root", "state", "runc", "opt", "cni", "pods"}) {
        Files.createDirectories(dir.resolve(d));
      }
      Files.writeString(dir.resolve("config.toml"), config(dir, runtime));
      if (rootSize != null) {
        Cmd.run("mount", "-t", "tmpfs", "-o", "size=" + rootSize + ",mode=700", "shmguard-test-containerd-root",
            dir.resolve("root").toString());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    String cgroupTop = "/shmguard-test-" + dir.getFileName();
    long t0 = System.nanoTime();
    Process daemon;
    try {
      List<String> command = new ArrayList<>(launcher);
      command.addAll(List.of(DAEMON.toString(), "--config", dir.resolve("config.toml").toString()));
      daemon = new ProcessBuilder(command)
          .redirectErrorStream(true).redirectOutput(dir.resolve("containerd.log").toFile())
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ContainerdCri cri = new ContainerdCri(dir, tools, cgroupTop, daemon);
    try {
      // The socket first: a client dialling before it exists waits out grpc's reconnect back-off (1 s).
      Eventually.until(cri::log, Duration.ofMinutes(2), () -> daemon.isAlive() && Files.exists(dir.resolve("containerd.sock"))
          && cri.cri("version").status() == 0);
      cri.startMillis = (System.nanoTime() - t0) / 1_000_000;
      cri.importImage(PAUSE_IMAGE, List.of("/pause"), root -> Files.copy(tools.resolve("pause"), root.resolve("pause")));
      cri.importImage(IMAGE, List.of("sh"), root -> {
        Path bin = Files.createDirectories(root.resolve("bin"));
        Files.copy(Path.of("/bin/busybox"), bin.resolve("busybox"));
        for (String applet : APPLETS) {
          Files.createSymbolicLink(bin.resolve(applet), Path.of("busybox"));
        }
        for (String d : new String[] {"proc", "dev", "sys", "tmp", "etc"}) {
          Files.createDirectories(root.resolve(d));
        }
      });
      System.out.printf("containerd (CRI) answered in %d ms, its two images imported %d ms later%n", cri.startMillis,
          (System.nanoTime() - t0) / 1_000_000 - cri.startMillis);
      return cri;
    } catch (RuntimeException | Error e) {
      cri.close();
      throw e;
    }
  }

  private static String config(Path dir, Path runtime) {
    String cri = "[plugins.\"io.containerd.grpc.v1.cri\"]\n";
    return "version = 2\n"
        + "root = \"" + dir.resolve("root") + "\"\n"
        + "state = \"" + dir.resolve("state") + "\"\n"
        + "required_plugins = [\"io.containerd.grpc.v1.cri\"]\n"
        + "[grpc]\n  address = \"" + dir.resolve("containerd.sock") + "\"\n"
        + "[ttrpc]\n  address = \"" + dir.resolve("containerd.sock.ttrpc") + "\"\n"
        + "[plugins.\"io.containerd.internal.v1.opt\"]\n  path = \"" + dir.resolve("opt") + "\"\n"
        + cri
        + "  sandbox_image = \"" + PAUSE_IMAGE + "\"\n"
        + "  restrict_oom_score_adj = true\n"
        + "  disable_apparmor = true\n"
        + "  stream_server_address = \"127.0.0.1\"\n"
        + "  stream_server_port = \"0\"\n"
        + "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
        + "    bin_dir = \"/usr/lib/cni\"\n"
        + "    conf_dir = \"" + dir.resolve("cni") + "\"\n"
        + "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
        + "    snapshotter = \"native\"\n"
        + "    default_runtime_name = \"" + (runtime == null ? "runc" : "shmguard") + "\"\n"
        + runtime("runc", RUNC, dir) + (runtime == null ? "" : runtime("shmguard", runtime, dir));
  }

  private static String runtime(String name, Path binary, Path dir) {
    String table = "plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes." + name;
    return "    [" + table + "]\n"
        + "      runtime_type = \"io.containerd.runc.v2\"\n"
        + "      [" + table + ".options]\n"
        + "        BinaryName = \"" + binary + "\"\n"
        + "        Root = \"" + dir.resolve("runc") + "\"\n"
        + "        SystemdCgroup = false\n";
  }

  /** How long containerd took from its start to its first CRI answer. */
  public long startMillis() {
    return startMillis;
  }

  /** containerd's state directory: the CRI plugin's sandboxes are under {@code io.containerd.grpc.v1.cri/sandboxes}. */
  public Path stateDir() {
    return dir.resolve("state");
  }

  /** Where the CRI plugin mounts {@code pod}'s /dev/shm: {@code <state>/io.containerd.grpc.v1.cri/sandboxes/<id>/shm}. */
  public Path sandboxShm(Pod pod) {
    return stateDir().resolve("io.containerd.grpc.v1.cri/sandboxes").resolve(pod.id()).resolve("shm");
  }

  /** The cgroup every pod's goes under ({@code /shmguard-test-<dir>}), removed at {@link #close}: a kubelet's {@code cgroupRoot}. */
  public String cgroupParent() {
    return cgroupTop;
  }

  /** containerd's CRI socket, a kubelet's {@code --container-runtime-endpoint}. */
  public Path socket() {
    return dir.resolve("containerd.sock");
  }

  /** The pod's cgroup, as kubelet's cgroupfs driver names a BestEffort pod's, under the set-up's own parent. */
  public String podCgroup(String uid) {
    return cgroupTop + "/kubepods/besteffort/pod" + uid;
  }

  /**
   * The pods' log directory, as kubelet's /var/log/pods: each pod's {@code log_directory} is
   * {@code <namespace>_<name>_<uid>} in it, made by {@link #runPod} as kubelet makes it (the CRI
   * plugin makes none).
   */
  public Path podLogs() {
    return dir.resolve("pods");
  }

  /** The set-up's own directory, under the sandbox's mounts. */
  public Path dir() {
    return dir;
  }

  /**
   * Runs a pod sandbox (RunPodSandbox) on the node's network, with its own IPC namespace and
   * /dev/shm or, with {@code hostIpc}, the node's; each container of it gets a PID namespace of
   * its own, kubelet's default.
   */
  public Pod runPod(String namespace, String name, String uid, boolean hostIpc) {
    ObjectNode c = JSON.createObjectNode();
    c.putObject("metadata").put("name", name).put("uid", uid).put("namespace", namespace).put("attempt", 0);
    // no hostname: on the node's network the pod has the node's UTS namespace, whose name runc may not set (nor does kubelet ask)
    Path logs = dir.resolve("pods").resolve(namespace + "_" + name + "_" + uid);
    c.put("log_directory", logs.toString());
    c.putObject("labels").put("io.kubernetes.pod.name", name).put("io.kubernetes.pod.namespace", namespace)
        .put("io.kubernetes.pod.uid", uid);
    ObjectNode linux = c.putObject("linux");
    linux.put("cgroup_parent", podCgroup(uid));
    linux.putObject("security_context").set("namespace_options", namespaces(hostIpc));
    try {
      Files.createDirectories(logs);
      Path config = Files.createTempFile(dir, "pod-", ".json");
      Files.writeString(config, JSON.writeValueAsString(c));
      Pod pod = new Pod(ok("runp", config.toString()), config, namespace, name, uid, hostIpc);
      pods.add(pod);
      return pod;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static ObjectNode namespaces(boolean hostIpc) {
    return JSON.createObjectNode().put("network", NODE).put("pid", CONTAINER).put("ipc", hostIpc ? NODE : POD);
  }

  /**
   * Creates and starts container {@code name}, attempt {@code attempt} (a kubelet's restart count),
   * of {@link #IMAGE} in {@code pod} running {@code command}; its id. Its output goes to
   * {@link #logs}.
   */
  public String run(Pod pod, String name, int attempt, String... command) {
    return run(pod, name, attempt, java.util.Map.of(), command);
  }

  /** As {@link #run(Pod, String, int, String...)}, with the environment variables {@code env}. */
  public String run(Pod pod, String name, int attempt, java.util.Map<String, String> env, String... command) {
    ObjectNode c = JSON.createObjectNode();
    var envs = c.putArray("envs");
    env.forEach((k, v) -> envs.addObject().put("key", k).put("value", v));
    c.putObject("metadata").put("name", name).put("attempt", attempt);
    c.putObject("image").put("image", IMAGE);
    var cmd = c.putArray("command");
    for (String arg : command) {
      cmd.add(arg);
    }
    c.put("log_path", name + "/" + attempt + ".log");
    c.putObject("labels").put("io.kubernetes.container.name", name).put("io.kubernetes.pod.uid", pod.uid());
    c.putObject("linux").putObject("security_context").set("namespace_options", namespaces(pod.hostIpc()));
    try {
      Files.createDirectories(dir.resolve("pods").resolve(pod.namespace() + "_" + pod.name() + "_" + pod.uid()).resolve(name));
      Path config = Files.createTempFile(dir, "container-", ".json");
      Files.writeString(config, JSON.writeValueAsString(c));
      String id = ok("create", pod.id(), config.toString(), pod.config().toString());
      ok("start", id);
      return id;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What container {@code name}'s attempt {@code attempt} printed, its lines without the CRI log format's time, stream and tag. */
  public List<String> logs(Pod pod, String name, int attempt) {
    Path log = dir.resolve("pods").resolve(pod.namespace() + "_" + pod.name() + "_" + pod.uid()).resolve(name)
        .resolve(attempt + ".log");
    try {
      return Files.readAllLines(log).stream().map(l -> l.split(" ", 4)).map(f -> f.length == 4 ? f[3] : "").toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /** ContainerStatus with its verbose info: {@code status.state} 0 created, 1 running, 2 exited; {@code info.pid}. */
  public JsonNode inspect(String container) {
    try {
      JsonNode r = JSON.readTree(ok("inspect", container));
      ObjectNode out = JSON.createObjectNode();
      out.set("status", r.get("status"));
      out.set("info", JSON.readTree(r.path("info").path("info").asText("{}")));
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether the container runs (CONTAINER_RUNNING). */
  public boolean running(String container) {
    return inspect(container).path("status").path("state").asInt(-1) == 1;
  }

  /** The host pid of the container's first process, as the CRI plugin's verbose status gives it (0 once it has exited). */
  public int pid(String container) {
    return inspect(container).path("info").path("pid").asInt(0);
  }

  /** The host pid of the pod's pause process. */
  public int pausePid(Pod pod) {
    try {
      JsonNode r = JSON.readTree(ok("inspectp", pod.id()));
      return JSON.readTree(r.path("info").path("info").asText("{}")).path("pid").asInt(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops and removes the pod sandbox and its containers (StopPodSandbox, RemovePodSandbox), as kubelet does when a pod is deleted. */
  public void removePod(Pod pod) {
    ok("stopp", pod.id());
    ok("rmp", pod.id());
    pods.remove(pod);
  }

  /** Stops the pod sandbox (StopPodSandbox): its containers are killed and its /dev/shm unmounted. */
  public void stopPod(Pod pod) {
    ok("stopp", pod.id());
  }

  /**
   * Imports the image archive {@code archive} (OCI or docker, as buildah or podman save it) into
   * the CRI plugin's namespace, unpacked for its snapshotter, and tags it {@code name}, the name a
   * pod then gives.
   */
  public void importArchive(Path archive, String name) {
    String sock = dir.resolve("containerd.sock").toString();
    java.util.Set<String> before = java.util.Set.of(Cmd.run(CTR.toString(), "--address", sock, "-n", "k8s.io", "images",
        "ls", "-q").split("\n"));
    Cmd.run(CTR.toString(), "--address", sock, "-n", "k8s.io", "images", "import", "--snapshotter", "native",
        archive.toString());
    List<String> added = java.util.Arrays.stream(Cmd.run(CTR.toString(), "--address", sock, "-n", "k8s.io", "images", "ls",
        "-q").split("\n")).filter(n -> !n.isBlank() && !before.contains(n)).toList();
    if (added.isEmpty()) {
      throw new AssertionError("ctr images import of " + archive + " added no image");
    }
    // An OCI archive's short name (buildah's "shmguard:TAG") is imported as it is, but the CRI
    // plugin knows the image by the name normalised (docker.io/library/shmguard:TAG) and asks
    // containerd for that when it creates a container: that name is made too.
    for (String n : added) {
      String first = n.split("/")[0];
      if (!n.startsWith("sha256:") && (!n.contains("/") || !(first.contains(".") || first.contains(":")))) {
        Cmd.run(CTR.toString(), "--address", sock, "-n", "k8s.io", "images", "tag", "--force", n,
            "docker.io/" + (n.contains("/") ? "" : "library/") + n);
      }
    }
    Cmd.run(CTR.toString(), "--address", sock, "-n", "k8s.io", "images", "tag", "--force", added.get(0), name);
    ok("image", name);
  }

  /** Runs the CRI client with {@code args} against this containerd and waits for it. */
  public Cmd.Result cri(String... args) {
    List<String> cmd = new ArrayList<>(List.of(tools.resolve("shmguard-cri").toString(), "-a",
        dir.resolve("containerd.sock").toString(), "-t", "90s"));
    cmd.addAll(List.of(args));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  /** As {@link #cri}, which must succeed: its output, stripped. */
  public String ok(String... args) {
    Cmd.Result r = cri(args);
    if (r.status() != 0) {
      throw new AssertionError("shmguard-cri " + String.join(" ", args) + " failed (" + r.status() + "): " + r.err() + r.out()
          + "\n" + tail());
    }
    return r.out().strip();
  }

  private interface RootMaker {
    void make(Path root) throws IOException;
  }

  /**
   * Makes an image of the directory {@code fill} makes ({@link OciArchive}) and imports it into
   * the CRI plugin's namespace, unpacked with the native snapshotter.
   */
  private void importImage(String name, List<String> entrypoint, RootMaker fill) {
    try {
      Path work = Files.createTempDirectory(dir, "image-");
      Path root = Files.createDirectories(work.resolve("root"));
      fill.make(root);
      Path archive = OciArchive.write(root, name, entrypoint, work);
      Cmd.run(CTR.toString(), "--address", dir.resolve("containerd.sock").toString(), "-n", "k8s.io", "images", "import",
          "--snapshotter", "native", archive.toString());
      ok("image", name);
      RuntimeTeardown.delete(work);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String log() {
    return "containerd answering CRI; " + tail();
  }

  private String tail() {
    return "containerd's log ends: " + LogTail.of(dir.resolve("containerd.log"), 30);
  }

  /**
   * Stops and removes every pod it ran, stops containerd by its pid (then each shim whose command
   * line names the set-up's directory), unmounts everything under the set-up, removes the cgroups
   * (ending by pid any process left in them) and the directory. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (daemon.isAlive()) {
        for (Pod pod : List.copyOf(pods)) {
          cri("stopp", pod.id());
          cri("rmp", pod.id());
        }
      }
      RuntimeTeardown.endDaemonAndItsHelpers(daemon, dir);
      RuntimeTeardown.unmountUnder(dir);
      RuntimeTeardown.removeCgroups(cgroupTop);
      RuntimeTeardown.delete(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
