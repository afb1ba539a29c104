package org.shmguard.host;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The one root every path shmguard reads hangs from, as node_exporter's --path.procfs: "/" on a
 * host, the host's root mounted elsewhere in a container, a fixture tree in tests.
 *
 * <pre>{@code
 * HostPaths host = HostPaths.of("/");
 * Path maps = host.proc("1234", "maps");   // /proc/1234/maps
 * }</pre>
 */
public final class HostPaths {
  private final Path root;
  private final Path proc;

  private HostPaths(Path root, Path proc) {
    this.root = root;
    this.proc = proc;
  }

  public static HostPaths of(String root) {
    Path r = Path.of(Objects.requireNonNull(root, "root")).toAbsolutePath().normalize();
    return new HostPaths(r, r.resolve("proc"));
  }

  public static HostPaths system() {
    return of("/");
  }

  public Path root() {
    return root;
  }

  /** A path under the proc filesystem, e.g. {@code proc("self", "mountinfo")}. */
  public Path proc(String... parts) {
    Path p = proc;
    for (String part : parts) {
      p = p.resolve(part);
    }
    return p;
  }

  /** A path as the host names it ("/dev/shm"), reached from this root. */
  public String resolve(String hostPath) {
    if (root.toString().equals("/")) {
      return hostPath;
    }
    return root.resolve(hostPath.startsWith("/") ? hostPath.substring(1) : hostPath).toString();
  }

  public boolean isSystemRoot() {
    return root.toString().equals("/");
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
