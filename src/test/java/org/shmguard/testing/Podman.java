package org.shmguard.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * A real container runtime for tests: Debian 12's podman 4.3 with runc, as root, with no registry
 * and no image. Its root filesystem is a directory of busybox-static ({@code --rootfs}); its
 * storage, run-time state, conmon files and locks all live in a fresh directory under the test
 * sandbox's own mounts ({@link Sandbox#MOUNTS}), removed by {@link #close}. crun does not run here,
 * so {@code --runtime runc}; the machine's default ulimits are not allowed to a container here, so
 * a containers.conf ({@code CONTAINERS_CONF}) sets {@code [containers] default_ulimits = []}.
 *
 * <pre>{@code
 * try (Podman podman = Podman.create()) {
 *   Process c = podman.run(List.of("--ipc=host"), "sh", "-c", "echo hi > /dev/shm/x; sleep 600");
 *   ...
 * }
 * }</pre>
 *
 * <p>Every container runs with {@code --rm --network=none}; the caller adds the namespace options
 * (for instance {@code --ipc=host}: the container shares the test's /dev/shm but has its own PID
 * namespace, podman's default). A container started by {@link #run} is stopped by killing its
 * podman process tree; {@link #close} (idempotent) kills what is left and removes every directory,
 * the containers' cgroups (under a parent of the set-up's own) included.
 */
public final class Podman implements AutoCloseable {

  private final Path dir;
  /** The containers' root: the set-up's busybox directory, or a debootstrapped root behind an overlay ({@link #onRoot}). */
  private final String rootfs;
  /** Every container's cgroup goes under this parent of the set-up's own, removed by {@link #close}. */
  private final String cgroupParent;
  private final List<Process> started = new ArrayList<>();
  private boolean closed;

  private Podman(Path dir, String rootfs) {
    this.dir = dir;
    this.rootfs = rootfs;
    this.cgroupParent = "/shmguard-test-" + dir.getFileName();
  }

  /** A fresh podman set-up with a busybox root; throws if podman, runc or busybox-static is missing. */
  public static Podman create() {
    try {
      Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "podman-");
      Path root = Files.createDirectories(dir.resolve("rootfs/bin"));
      Files.copy(Path.of("/bin/busybox"), root.resolve("busybox"));
      for (String applet : new String[] {"sh", "sleep", "echo", "cat", "printf", "true"}) {
        Files.createSymbolicLink(root.resolve(applet), Path.of("busybox"));
      }
      for (String d : new String[] {"proc", "dev", "sys", "tmp", "etc"}) {
        Files.createDirectories(dir.resolve("rootfs").resolve(d));
      }
      Files.writeString(dir.resolve("containers.conf"), "[containers]\ndefault_ulimits = []\n");
      return new Podman(dir, dir.resolve("rootfs").toString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The busybox root filesystem every container runs in; a test may add files to it. */
  public Path rootfs() {
    return dir.resolve("rootfs");
  }

  /**
   * A podman set-up whose containers run on {@code root} (a debootstrapped root cached under
   * /var/cache/shmguard), seen through podman's overlay ({@code --rootfs ROOT:O}): what a
   * container writes goes to an upper layer in the set-up's storage, and the cached root is never
   * changed.
   */
  public static Podman onRoot(Path root) {
    Podman busybox = create();
    return new Podman(busybox.dir, root + ":O");
  }

  /** Runs {@code command} in the running container {@code name} ({@code podman exec} with {@code options}) and waits for it. */
  public Cmd.Result exec(String name, List<String> options, String... command) {
    List<String> cmd = new ArrayList<>(List.of("env"));
    env().forEach((k, v) -> cmd.add(k + "=" + v));
    cmd.addAll(podman());
    cmd.add("exec");
    cmd.addAll(options);
    cmd.add(name);
    cmd.addAll(List.of(command));
    return Cmd.exec(cmd.toArray(String[]::new));
  }

  private List<String> podman() {
    return List.of("podman", "--root", storage().toString(), "--runroot", dir.resolve("run").toString(),
        "--tmpdir", dir.resolve("tmp").toString(), "--cgroup-manager=cgroupfs", "--events-backend=file");
  }

  private java.util.Map<String, String> env() {
    return java.util.Map.of("CONTAINERS_CONF", dir.resolve("containers.conf").toString(), "XDG_RUNTIME_DIR",
        dir.resolve("xdg").toString());
  }

  /** The set-up's own directory, under the sandbox's mounts: a place for a test's scripts and cid files. */
  public Path dir() {
    return dir;
  }

  /** Starts {@code command} in a new container with {@code options} added to podman's; stdout is the returned process's. */
  public Process run(List<String> options, String... command) {
    return start(true, options, command);
  }

  /**
   * As {@link #run}, without {@code --rm}: the container stays, exited, until {@link #close}
   * (podman unmounts its /dev/shm when it exits, as its cleanup does).
   */
  public Process runKept(List<String> options, String... command) {
    return start(false, options, command);
  }

  /** The containers/storage graph root (podman's {@code --root}): containers' shm is under its overlay-containers. */
  public Path storage() {
    return dir.resolve("storage");
  }

  private Process start(boolean remove, List<String> options, String... command) {
    List<String> cmd = new ArrayList<>(podman());
    cmd.add("run");
    if (remove) {
      cmd.add("--rm");
    }
    cmd.addAll(List.of("--runtime", "runc", "--network=none", "--cgroup-parent", cgroupParent));
    cmd.addAll(options);
    cmd.addAll(List.of("--rootfs", rootfs));
    cmd.addAll(List.of(command));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().putAll(env());
    try {
      Process p = pb.start();
      started.add(p);
      return p;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Kills every container's podman, conmon and payload, unmounts anything left under the set-up, removes it. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      try {
        p.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    try {
      // conmon double-forks away from podman: end each by the pid in its conmon.pid file, if that
      // pid is still a process of this set-up (its command line names the set-up's directory).
      try (Stream<Path> all = Files.walk(dir)) {
        for (Path pidFile : all.filter(p -> p.getFileName().toString().equals("conmon.pid")).toList()) {
          long pid = Long.parseLong(Files.readString(pidFile).strip());
          ProcessHandle.of(pid).filter(h -> h.info().commandLine().map(c -> c.contains(dir.toString())).orElse(false))
              .ifPresent(h -> {
                h.destroyForcibly();
                h.onExit().join();
              });
        }
      }
      RuntimeTeardown.unmountUnder(dir);
      Files.deleteIfExists(Path.of("/dev/shm/libpod_lock")); // podman's lock file, in the sandbox's own /dev/shm
      RuntimeTeardown.removeCgroups(cgroupParent);
      RuntimeTeardown.delete(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

}
