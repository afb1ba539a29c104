package org.shmguard.it.ship;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TmpfsMount;

/**
 * Debian's buildah and podman, as root in the test sandbox, with everything they make inside it:
 * image storage (--root, --runroot) on a tmpfs of the sandbox's own, a containers.conf that runs
 * runc with cgroupfs and file events and sets no default ulimits, and containers under a cgroup
 * parent of this engine's own. The image library writes its blob cache to /var/lib/containers,
 * whatever the storage options say: /var/lib is covered, in the sandbox's mount namespace, by an
 * overlay whose upper layer is on that tmpfs. {@link #close()} removes the containers, the images,
 * the overlay, the tmpfs, podman's lock file in the sandbox's /dev/shm, and the cgroups (the only
 * thing outside the sandbox's mounts).
 */
final class ContainerEngine implements AutoCloseable {
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");
  private static final Path VAR_LIB = Path.of("/var/lib");
  /** podman's lock file, in /dev/shm: the sandbox's own. */
  private static final Path LOCKS = Path.of("/dev/shm/libpod_lock");
  private final TmpfsMount store;
  private final String cgroupParent;
  private final Map<String, String> env;
  private final boolean hadLocks = Files.exists(LOCKS);

  private ContainerEngine(TmpfsMount store, String cgroupParent, Map<String, String> env) {
    this.store = store;
    this.cgroupParent = cgroupParent;
    this.env = env;
  }

  static ContainerEngine start() {
    TmpfsMount store = TmpfsMount.create("size=4g,mode=700");
    try {
      Path conf = store.file("containers.conf");
      Files.writeString(conf, """
          [containers]
          default_ulimits = []
          [engine]
          runtime = "runc"
          cgroup_manager = "cgroupfs"
          events_logger = "file"
          """);
      Path storage = store.file("storage.conf");
      Files.writeString(storage, "[storage]\ndriver = \"overlay\"\ngraphroot = \"" + store.file("root")
          + "\"\nrunroot = \"" + store.file("runroot") + "\"\n");
      Files.createDirectories(store.file("tmp"));
      Files.createDirectories(store.file("var-lib/upper"));
      Files.createDirectories(store.file("var-lib/work"));
      Cmd.run("mount", "-t", "overlay", "shmguard-test-var-lib", "-o", "lowerdir=" + VAR_LIB + ",upperdir="
          + store.file("var-lib/upper") + ",workdir=" + store.file("var-lib/work"), VAR_LIB.toString());
      return new ContainerEngine(store, "/shmguard-image-test-" + ProcessHandle.current().pid(), Map.of(
          "CONTAINERS_CONF", conf.toString(), "CONTAINERS_STORAGE_CONF", storage.toString(),
          "TMPDIR", store.file("tmp").toString()));
    } catch (IOException e) {
      store.close();
      throw new UncheckedIOException(e);
    } catch (RuntimeException | Error e) {
      store.close();
      throw e;
    }
  }

  /** Where the storage, the configuration and the overlay's upper layer are: a tmpfs. */
  Path store() {
    return store.path();
  }

  /** The environment that points buildah (and build-image.sh) at this engine's storage. */
  Map<String, String> env() {
    return env;
  }

  /** The cgroup parent that {@link #podman} containers must name (--cgroup-parent). */
  String cgroupParent() {
    return cgroupParent;
  }

  /** podman with this engine's storage, runc, cgroupfs and file events; fails on a non-zero status. */
  String podman(String... args) {
    Cmd.Result r = podmanExec(args);
    if (r.status() != 0) {
      throw new AssertionError("podman " + String.join(" ", args) + " failed (" + r.status() + "): " + r.err() + r.out());
    }
    return r.out();
  }

  Cmd.Result podmanExec(String... args) {
    List<String> cmd = new ArrayList<>(List.of("podman", "--root", store.file("root").toString(),
        "--runroot", store.file("runroot").toString(), "--runtime", "runc", "--cgroup-manager=cgroupfs",
        "--events-backend=file", "--tmpdir", store.file("tmp").toString()));
    cmd.addAll(List.of(args));
    return run(cmd, 300);
  }

  /** Runs {@code command} with this engine's environment, output and errors together. */
  Cmd.Result run(List<String> command, long timeoutSeconds) {
    try {
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      pb.environment().putAll(env);
      Process p = pb.start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("timed out: " + String.join(" ", command));
      }
      return new Cmd.Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), "");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** The cgroup directories this engine's containers left, deepest first (empty after close). */
  List<Path> cgroups() {
    List<Path> found = new ArrayList<>();
    try (Stream<Path> hierarchies = Files.list(CGROUPS)) {
      for (Path h : hierarchies.toList()) {
        Path dir = h.resolve(cgroupParent.substring(1));
        if (Files.isDirectory(dir)) {
          try (Stream<Path> tree = Files.walk(dir)) {
            tree.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).forEach(found::add);
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  @Override
  public void close() {
    try {
      podmanExec("rm", "--all", "--force", "--time", "0");
      podmanExec("rmi", "--all", "--force");
      // buildah's own working containers (a build that failed half-way) live in the same storage.
      run(List.of("buildah", "rm", "--all"), 120);
      run(List.of("buildah", "rmi", "--all", "--force"), 120);
      for (Path dir : cgroups()) {
        try {
          Files.deleteIfExists(dir);
        } catch (IOException e) {
          // a cgroup with a process left in it: reported by the test through cgroups()
        }
      }
      if (!hadLocks) {
        Files.deleteIfExists(LOCKS);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      Cmd.exec("umount", "-l", VAR_LIB.toString());
      Cmd.exec("umount", "-R", "-l", store.path().toString());
      store.close();
    }
  }
}
