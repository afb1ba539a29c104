package org.shmguard.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The test sandbox (src/test/sandbox/bin/java): a private PID and mount namespace, a private tmpfs
 * over /dev/shm and /run. Tests that touch kernel objects call {@link #require()} first; outside
 * the sandbox (no root) they skip with the reason.
 */
public final class Sandbox {
  /** Where fixtures mount their tmpfs instances: inside the sandbox's private /run. */
  public static final Path MOUNTS = Path.of("/run/shmguard-test");

  private Sandbox() {}

  public static boolean active() {
    return "1".equals(System.getenv("SHMGUARD_SANDBOX")) && ProcessHandle.current().pid() > 0 && isRoot();
  }

  /** Skips the calling test unless it runs as root inside the sandbox. */
  public static void require() {
    assumeTrue(isRoot(), "needs root: it mounts tmpfs instances and starts processes in namespaces");
    assumeTrue("1".equals(System.getenv("SHMGUARD_SANDBOX")),
        "needs the test sandbox (src/test/sandbox/bin/java, run by 'mvn verify' as root): it must never touch the real /dev/shm");
  }

  static boolean isRoot() {
    try {
      return Files.readString(Path.of("/proc/self/status")).lines()
          .filter(l -> l.startsWith("Uid:")).findFirst().map(l -> l.split("\\s+")[1].equals("0")).orElse(false);
    } catch (IOException e) {
      return false;
    }
  }

  /** The java binary of this JVM, for child processes. */
  public static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
