package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real Docker for tests: Debian 12's docker.io 20.10 (dockerd, the containerd it starts, runc),
 * as root, with no registry. The daemon and everything it keeps live in a fresh directory under
 * the test sandbox's own mounts ({@link Sandbox#MOUNTS}), a tmpfs of its own: its {@code --data-root},
 * {@code --exec-root} (containerd's state and sockets too), pid file, API socket, configuration
 * file and trust key. No bridge, no iptables; the one image, {@link #IMAGE}, is {@code docker
 * import}ed from a busybox-static root. Containers' cgroups go under a parent of the set-up's own
 * ({@code /shmguard-test-<dir>/docker}, cgroupfs driver), so that their paths have the shape of
 * Docker's default {@code /docker/<id>}; {@link #close} removes them.
 *
 * <pre>{@code
 * try (Docker docker = Docker.start()) {
 *   String id = docker.runDetached(List.of("--ipc=shareable"), "sh", "-c", "sleep 600");
 *   ...
 * }
 * }</pre>
 *
 * <p>Start-up is seconds on a loaded machine: a test class shares one. The client and daemon are
 * always called by their full paths ({@code /usr/bin/docker}, {@code /usr/sbin/dockerd}).
 *
 * <p>A test that needs python3 in its containers asks for {@link #pythonImage()}: the cached Debian
 * root of {@link PythonRoot}, imported on the first call only, then run with
 * {@link #runDetached(String, List, String...)}.
 */
public final class Docker implements AutoCloseable {
  public static final String IMAGE = "busybox:shmguard";
  /** {@link PythonRoot}'s Debian root with python3, imported by {@link #pythonImage()}. */
  public static final String PYTHON_IMAGE = "python:shmguard";
  /**
   * What a job's container never reads, left out of an imported root: apt's downloaded packages
   * and lists, documentation, manual pages and translations (the python root's 235 MB become
   * 100 MB), and the root's device nodes (Docker mounts a /dev of its own over them).
   */
  private static final String[] IMPORT_EXCLUDES = {"./dev/*", "./var/cache/apt/*", "./var/lib/apt/lists/*",
      "./usr/share/doc/*", "./usr/share/man/*", "./usr/share/info/*", "./usr/share/locale/*"};
  private static final Path CLIENT = Path.of("/usr/bin/docker");
  private static final Path DAEMON = Path.of("/usr/sbin/dockerd");
  private static final String[] APPLETS = {"sh", "sleep", "echo", "cat", "printf", "true", "ls", "head", "tail", "df", "kill",
      "mount", "grep", "rm", "stat"};

  private final Path dir;
  private final String cgroupTop;
  private final Process daemon;
  private long startMillis;
  /** The images imported into this daemon with the milliseconds each import took. */
  private final Map<String, Long> imported = new HashMap<>();
  private boolean closed;

  private Docker(Path dir, String cgroupTop, Process daemon, long startMillis) {
    this.dir = dir;
    this.cgroupTop = cgroupTop;
    this.daemon = daemon;
    this.startMillis = startMillis;
  }

  /** Whether docker.io is installed (the tests that need it skip without it). */
  public static boolean installed() {
    return Files.isExecutable(CLIENT) && Files.isExecutable(DAEMON);
  }

  /** Starts a private dockerd and imports {@link #IMAGE}; throws if it does not answer within two minutes. */
  public static Docker start() {
    return start(null);
  }

  /**
   * As {@link #start()}, with the runtime {@code runtime} registered in dockerd's configuration
   * file as {@code daemon.json} does it ({@code "runtimes": {"shmguard": {"path": runtime}}}), for
   * containers started with {@code --runtime=shmguard}; null registers none.
   */
  public static Docker start(Path runtime) {
    Path dir;
    try {
      dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "docker-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      // A tmpfs of the set-up's own: an imported Debian root and each container's two vfs copies
      // of it (an init layer and the container's own) take about 300 MB, which would crowd the
      // sandbox's 512 MiB /run. Memory is used only as it fills; close unmounts it.
      Cmd.run("mount", "-t", "tmpfs", "-o", "size=2g,mode=0700", "shmguard-test-docker", dir.toString());
      Path root = Files.createDirectories(dir.resolve("rootfs/bin"));
      Files.copy(Path.of("/bin/busybox"), root.resolve("busybox"));
      for (String applet : APPLETS) {
        Files.createSymbolicLink(root.resolve(applet), Path.of("busybox"));
      }
      for (String d : new String[] {"proc", "dev", "sys", "tmp", "etc"}) {
        Files.createDirectories(dir.resolve("rootfs").resolve(d));
      }
      // The trust key goes to /etc/docker/key.json unless the configuration file says otherwise.
      Files.writeString(dir.resolve("daemon.json"), "{\"deprecated-key-path\": \"" + dir.resolve("key.json") + "\""
          + (runtime == null ? "" : ", \"runtimes\": {\"shmguard\": {\"path\": \"" + runtime + "\"}}") + "}\n");
    } catch (IOException e) {
      throw abandon(dir, e);
    }
    String cgroupTop = "/shmguard-test-" + dir.getFileName();
    long t0 = System.nanoTime();
    Process daemon;
    try {
      daemon = new ProcessBuilder(DAEMON.toString(), "--config-file", dir.resolve("daemon.json").toString(), "--data-root",
          dir.resolve("data").toString(), "--exec-root", dir.resolve("exec").toString(), "--pidfile",
          dir.resolve("dockerd.pid").toString(), "-H", "unix://" + dir.resolve("docker.sock"), "--bridge=none",
          "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--userland-proxy=false", "--storage-driver=vfs",
          "--exec-opt", "native.cgroupdriver=cgroupfs", "--cgroup-parent=" + cgroupTop + "/docker")
          .redirectErrorStream(true).redirectOutput(dir.resolve("dockerd.log").toFile()).start();
    } catch (IOException e) {
      throw abandon(dir, e);
    }
    Docker docker = new Docker(dir, cgroupTop, daemon, 0);
    try {
      Eventually.until(docker::log, Duration.ofMinutes(2),
          () -> daemon.isAlive() && docker.client("version").status() == 0);
      long millis = (System.nanoTime() - t0) / 1_000_000;
      docker.startMillis = millis;
      String tar = dir.resolve("rootfs.tar").toString();
      Cmd.run("tar", "-C", dir.resolve("rootfs").toString(), "-cf", tar, ".");
      docker.ok("import", tar, IMAGE);
      System.out.printf("dockerd answered in %d ms%n", millis);
      return docker;
    } catch (RuntimeException | Error e) {
      docker.close();
      throw e;
    }
  }

  /**
   * {@link #PYTHON_IMAGE}, imported from {@link PythonRoot} (made first where it is not cached, or
   * the test skipped) on the first call to this Docker; later calls return at once.
   */
  public String pythonImage() throws IOException, InterruptedException {
    importRoot(PythonRoot.prepare(), PYTHON_IMAGE);
    return PYTHON_IMAGE;
  }

  /**
   * Imports the directory {@code root} as the image {@code image} ({@code tar -C root -c . | docker
   * import - image}, without what {@link #IMPORT_EXCLUDES} names), once per image and Docker start;
   * how many milliseconds the import took (the first call's, for the later ones).
   */
  public synchronized long importRoot(Path root, String image) {
    Long known = imported.get(image);
    if (known != null) {
      return known;
    }
    long t0 = System.nanoTime();
    List<String> cmd = new ArrayList<>(List.of("bash", "-o", "pipefail", "-c",
        "root=$1 client=$2 host=$3 image=$4; shift 4; tar -C \"$root\" \"$@\" -c . | \"$client\" -H \"$host\" import - \"$image\"",
        "bash", root.toString(), CLIENT.toString(), "unix://" + dir.resolve("docker.sock"), image));
    for (String exclude : IMPORT_EXCLUDES) {
      cmd.add("--exclude=" + exclude);
    }
    Cmd.run(cmd.toArray(String[]::new));
    long millis = (System.nanoTime() - t0) / 1_000_000;
    imported.put(image, millis);
    System.out.printf("imported %s as %s in %d ms%n", root, image, millis);
    return millis;
  }

  /** Unmounts and removes a set-up that could not be started; the error to throw. */
  private static UncheckedIOException abandon(Path dir, IOException e) {
    try {
      RuntimeTeardown.unmountUnder(dir);
      RuntimeTeardown.delete(dir);
    } catch (IOException | InterruptedException again) {
      if (again instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      e.addSuppressed(again);
    }
    return new UncheckedIOException(e);
  }

  /** How long dockerd took from its start to its first answer. */
  public long startMillis() {
    return startMillis;
  }

  /** dockerd's {@code --data-root}: a container's shareable shm is at {@code containers/<id>/mounts/shm} under it. */
  public Path dataRoot() {
    return dir.resolve("data");
  }

  /** The set-up's own directory, under the sandbox's mounts: a place for a test's files. */
  public Path dir() {
    return dir;
  }

  /** Runs the docker client with {@code args} against this daemon and waits for it. */
  public Cmd.Result client(String... args) {
    List<String> cmd = new ArrayList<>(List.of(CLIENT.toString(), "-H", "unix://" + dir.resolve("docker.sock")));
    cmd.addAll(List.of(args));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  /** As {@link #client}, which must succeed: its output, stripped. */
  public String ok(String... args) {
    Cmd.Result r = client(args);
    if (r.status() != 0) {
      throw new AssertionError("docker " + String.join(" ", args) + " failed (" + r.status() + "): " + r.err() + r.out());
    }
    return r.out().strip();
  }

  /** Starts {@code command} in a new detached container of {@link #IMAGE} with {@code options} ({@code --network=none} added); its full id. */
  public String runDetached(List<String> options, String... command) {
    return runDetached(IMAGE, options, command);
  }

  /** As {@link #runDetached(List, String...)}, in a container of {@code image} (one {@link #importRoot} imported). */
  public String runDetached(String image, List<String> options, String... command) {
    List<String> args = new ArrayList<>(List.of("run", "-d", "--network=none"));
    args.addAll(options);
    args.add(image);
    args.addAll(List.of(command));
    return ok(args.toArray(String[]::new));
  }

  /** The host pid of the container's first process, 0 when it is not running. */
  public int pid(String container) {
    return Integer.parseInt(ok("inspect", "-f", "{{.State.Pid}}", container));
  }

  private String log() {
    try {
      return "dockerd answering; its log: " + Files.readString(dir.resolve("dockerd.log"));
    } catch (IOException e) {
      return "dockerd answering (" + e + ")";
    }
  }

  /**
   * Removes every container, stops dockerd by its pid (then containerd and the shims it started,
   * each a process whose command line names the set-up's directory), unmounts everything under the
   * set-up, removes the containers' cgroups and the directory. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (daemon.isAlive()) {
        String all = client("ps", "-aq").out().strip();
        if (!all.isEmpty()) {
          List<String> rm = new ArrayList<>(List.of("rm", "-f"));
          rm.addAll(List.of(all.split("\\s+")));
          client(rm.toArray(String[]::new));
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
