package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Debian root with a JRE that the container image is built on and that tests run shmguard in
 * (the doctor inside a container): {@code debootstrap --variant=minbase --include=default-jre-headless
 * bookworm}, made once and cached in /var/cache/shmguard/bookworm-jre-root, the very root and
 * command packaging/kubernetes/build-image.sh uses, so whichever runs first makes it for both.
 *
 * <pre>{@code
 * Path root = JreRoot.prepare();   // skips the test where it cannot be made
 * }</pre>
 */
public final class JreRoot {
  public static final Path PATH = Path.of("/var/cache/shmguard/bookworm-jre-root");

  private JreRoot() {}

  /** Makes the root once (a few minutes with a network); later runs reuse it. */
  public static synchronized Path prepare() throws IOException, InterruptedException {
    if (Files.isExecutable(PATH.resolve("usr/bin/java"))) {
      return PATH;
    }
    assumeTrue(Files.isExecutable(Path.of("/usr/sbin/debootstrap")), "needs debootstrap to build " + PATH);
    Path tmp = PATH.resolveSibling(PATH.getFileName() + ".tmp.test");
    Cmd.exec("rm", "-rf", tmp.toString());
    Files.createDirectories(tmp.getParent());
    Cmd.Result r = Cmd.exec("debootstrap", "--variant=minbase", "--include=default-jre-headless", "bookworm",
        tmp.toString(), "http://deb.debian.org/debian");
    assumeTrue(r.status() == 0, "debootstrap failed (no network?): " + r.err().lines().reduce((a, b) -> b).orElse(""));
    // What a base image leaves out, as build-image.sh does: downloaded packages and the package lists.
    Cmd.exec("sh", "-c", "rm -rf \"$0\"/var/cache/apt/archives/*.deb \"$0\"/var/lib/apt/lists/*", tmp.toString());
    Files.move(tmp, PATH);
    return PATH;
  }
}
