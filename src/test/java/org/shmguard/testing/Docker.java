package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Docker for tests: Debian 12's docker.io 20.10 (dockerd, the containerd it starts, runc),
 * as root, with no registry. The daemon and everything it keeps live in a fresh directory under
 * the test sandbox's own mounts ({@link Sandbox#MOUNTS}): its {@code --data-root},
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
 */
public final class Docker implements AutoCloseable {
  public static final String IMAGE = "busybox:shmguard";
  private static final Path CLIENT = Path.of("/usr/bin/docker");
  private static final Path DAEMON = Path.of("/usr/sbin/dockerd");
  private static final String[] APPLETS = {"sh", "sleep", "echo", "cat", "printf", "true", "ls", "head", "tail", "df", "kill",
      "mount", "grep", "rm", "stat"};

  private final Path dir;
  private final String cgroupTop;
  private final Process daemon;
  private long startMillis;
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
      throw new UncheckedIOException(e);
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
      throw new UncheckedIOException(e);
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
    List<String> args = new ArrayList<>(List.of("run", "-d", "--network=none"));
    args.addAll(options);
    args.add(IMAGE);
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
