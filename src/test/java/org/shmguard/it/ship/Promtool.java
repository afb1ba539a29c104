package org.shmguard.it.ship;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Prometheus's own checker, run on what shmguard really produces; tests skip when it is not installed. */
final class Promtool {
  private static final Path BINARY = Path.of("/usr/bin/promtool");

  private Promtool() {}

  static void requireInstalled() {
    assumeTrue(Files.isExecutable(BINARY), "promtool is not installed (Debian: apt-get install prometheus; .ci/run does)");
  }

  /** Runs {@code promtool check metrics} on {@code exposition} and fails with its complaints. */
  static void checkMetrics(String exposition) {
    requireInstalled();
    String out = run(exposition, BINARY.toString(), "check", "metrics");
    assertThat(out).as("promtool check metrics").isEmpty();
  }

  static void checkRules(Path rules) {
    requireInstalled();
    run("", BINARY.toString(), "check", "rules", rules.toString());
  }

  /** Runs {@code promtool test rules} on a unit-test file: each case's alerts must fire (or not) exactly as written. */
  static void testRules(Path tests) {
    requireInstalled();
    run("", BINARY.toString(), "test", "rules", tests.toString());
  }

  private static String run(String stdin, String... command) {
    try {
      Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
      try (OutputStream in = p.getOutputStream()) {
        in.write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("promtool did not finish");
      }
      assertThat(p.exitValue()).as(String.join(" ", command) + ":\n" + out).isZero();
      return out;
    } catch (IOException e) {
      throw new AssertionError("cannot run promtool: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
