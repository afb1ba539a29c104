package org.shmguard.testing;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs packaging/share/shmguard_client.py as its callers do: {@code python3 -I -S client ...} in
 * a process of its own, stdin from /dev/null, killed at a deadline (as node-problem-detector
 * kills a plugin at its timeout).
 */
public record PyClient(int status, String out, String err, Duration took, boolean killed) {
  public static final Path CLIENT = Path.of("packaging/share/shmguard_client.py").toAbsolutePath();
  /** The distribution's python3, not a version manager's shim on PATH. */
  public static final Path PYTHON = Path.of("/usr/bin/python3");

  public static void require() {
    assumeTrue(Files.isExecutable(PYTHON), "needs /usr/bin/python3");
  }

  public static PyClient run(Duration deadline, Map<String, String> env, String... args) {
    require();
    List<String> cmd = new ArrayList<>(List.of(PYTHON.toString(), "-I", "-S", CLIENT.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().remove("SHMGUARD_ADVICE_SOCKET");
    pb.environment().putAll(env);
    long start = System.nanoTime();
    try {
      Path out = Files.createTempFile("pyclient", ".out");
      Path err = Files.createTempFile("pyclient", ".err");
      try {
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        boolean done = p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS);
        if (!done) {
          p.destroyForcibly();
          p.waitFor(30, TimeUnit.SECONDS);
        }
        return new PyClient(done ? p.exitValue() : -1, Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8), Duration.ofNanos(System.nanoTime() - start), !done);
      } finally {
        Files.deleteIfExists(out);
        Files.deleteIfExists(err);
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
