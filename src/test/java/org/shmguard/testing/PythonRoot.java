package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The Debian root with python3 that the tests run clients in (a job image, a container's root):
 * {@code debootstrap --variant=minbase --include=python3-minimal bookworm}, made once and cached in
 * /var/cache/shmguard/bookworm-python-root. It has no mmap or multiprocessing module: a test that
 * needs them binds the host's /usr/lib/python3.11 over its own, read-only.
 *
 * <pre>{@code
 * Path root = PythonRoot.prepare();   // skips the test where it cannot be made
 * }</pre>
 */
public final class PythonRoot {
  public static final Path PATH = Path.of("/var/cache/shmguard/bookworm-python-root");

  private PythonRoot() {}

  /** Makes the root once (a minute or two with a network); later runs reuse it. */
  public static synchronized Path prepare() throws IOException, InterruptedException {
    if (Files.isExecutable(PATH.resolve("usr/bin/python3")) && Files.isExecutable(PATH.resolve("usr/bin/setpriv"))) {
      return PATH;
    }
    assumeTrue(Files.isExecutable(Path.of("/usr/sbin/debootstrap")), "needs debootstrap to build " + PATH);
    Path tmp = PATH.resolveSibling(PATH.getFileName() + ".tmp");
    deleteTree(tmp);
    Files.createDirectories(tmp.getParent());
    Cmd.Result r = Cmd.exec("debootstrap", "--variant=minbase", "--include=python3-minimal", "bookworm", tmp.toString(),
        "http://deb.debian.org/debian");
    assumeTrue(r.status() == 0, "debootstrap failed (no network?): " + r.err().lines().reduce((a, b) -> b).orElse(""));
    Files.move(tmp, PATH);
    return PATH;
  }

  private static void deleteTree(Path p) throws IOException {
    if (Files.exists(p)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path f : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
  }
}
