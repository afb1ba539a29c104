package org.shmguard.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a container runtime the tests start (testing.Podman, testing.Docker) leaves once it is
 * stopped, removed: every mount at or under its directory, its cgroup trees in every hierarchy
 * (the machine's, not the sandbox's), and the directory itself.
 */
final class RuntimeTeardown {
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  private RuntimeTeardown() {}

  /** Lazily unmounts every mount at or under {@code dir}, deepest (latest) first. */
  /**
   * Ends {@code daemon} (SIGTERM, then SIGKILL after 30 s), then, by pid, every process whose
   * command line names {@code dir}: the shims and helpers a runtime started for the set-up.
   */
  static void endDaemonAndItsHelpers(Process daemon, Path dir) throws InterruptedException {
    daemon.destroy();
    if (!daemon.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
      daemon.destroyForcibly().waitFor();
    }
    String mark = dir.toString();
    for (ProcessHandle h : ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().map(c -> c.contains(mark)).orElse(false)).toList()) {
      h.destroyForcibly();
      h.onExit().join();
    }
  }

  static void unmountUnder(Path dir) throws IOException, InterruptedException {
    String mark = dir.toString();
    List<String> mounts = Files.readAllLines(Path.of("/proc/self/mountinfo"));
    for (int i = mounts.size() - 1; i >= 0; i--) {
      String point = mounts.get(i).split(" ")[4];
      if (point.startsWith(mark + "/") || point.equals(mark)) {
        new ProcessBuilder("umount", "-l", point).start().waitFor();
      }
    }
  }

  /**
   * Removes the cgroup tree {@code top} (as "/shmguard-test-x") in every hierarchy, deepest first.
   * A process still in one is the set-up's own (a container's process may outlive its runtime for
   * a moment): it is ended by its pid, and the directory tried again for up to 10 s.
   */
  static void removeCgroups(String top) throws IOException {
    List<Path> dirs = new ArrayList<>();
    try (Stream<Path> hierarchies = Files.list(CGROUPS)) {
      for (Path h : hierarchies.toList()) {
        Path root = h.resolve(top.substring(1));
        if (Files.isDirectory(root)) {
          try (Stream<Path> tree = Files.walk(root)) {
            tree.filter(Files::isDirectory).forEach(dirs::add);
          }
        }
      }
    }
    dirs.sort(Comparator.comparingInt(Path::getNameCount).reversed());
    for (Path d : dirs) {
      long end = System.nanoTime() + 10_000_000_000L;
      while (!d.toFile().delete() && System.nanoTime() < end) {
        Path procs = d.resolve("cgroup.procs");
        if (Files.exists(procs)) {
          for (String pid : Files.readAllLines(procs)) {
            ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
          }
        }
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** Removes {@code dir} and everything in it. */
  static void delete(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
