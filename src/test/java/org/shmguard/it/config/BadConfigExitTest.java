package org.shmguard.it.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * What an operator sees when the configuration is wrong: one line naming the file, the line, the
 * key and what is allowed, exit 78, nothing done; for files built to hurt the loader as well.
 */
class BadConfigExitTest {

  @Test
  void everyCommandStopsWithStatus78AndTheKeyAndLine(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("shmguard.yaml");
    Files.writeString(bad, "# comment\nreap:\n  grace: soon\n");
    for (String command : new String[] {"scan", "clean", "daemon"}) {
      CliRun run = CliRun.of(command, "--config", bad.toString());

      assertThat(run.status()).as(command).isEqualTo(78);
      assertThat(run.out()).isEmpty();
      assertThat(run.err().strip()).isEqualTo("shmguard: bad configuration: " + bad + ":3: reap.grace: \"soon\" is not a duration; "
          + "allowed: a duration from 0ms to 30d: a whole number with a unit ms, s, m, h or d (such as 500ms, 30s, 2m)");
    }
  }

  /** A hostile file, and what the one line about it must say. */
  record Hostile(String name, String text, int line, String key, String problem, String allowed) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Hostile> hostileFiles() {
    StringBuilder bomb = new StringBuilder("reap:\n  patterns: &a [\"nccl-*\", \"nccl-*\", \"nccl-*\"]\n");
    for (char c = 'b', prev = 'a'; c <= 'k'; prev = c, c++) {
      bomb.append("  ").append(c).append(": &").append(c).append(" [").append(("*" + prev + ", ").repeat(9)).append('*').append(prev).append("]\n");
    }
    return Stream.of(
        new Hostile("deep nesting", "reap:\n  deny: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n", 2, "reap.deny",
            "nested more than 8 levels deep", "at most 8 levels of nesting"),
        new Hostile("16 MiB file", "# padding\n".repeat(16 * 1024 * 1024 / 10), 26215, null,
            "the file is larger than 262144 bytes", "a file of at most 262144 bytes (256 KiB)"),
        new Hostile("alias bomb", bomb.toString(), 2, "reap.patterns", "an anchor (&a) marks a value for reuse",
            "every value written out where it is used"),
        new Hostile("second document", "reap:\n  dryRun: true\n---\nreap:\n  dryRun: false\n", 3, "reap",
            "a second YAML document starts here", "one YAML document per file"),
        new Hostile("a number as a deny pattern", "reap:\n  deny: [123]\n", 2, "reap.deny",
            "123 is a number in YAML, not text; quote it (\"123\") if a name is meant",
            "a list of file name patterns such as \"cuda.shm.*\" (* ? and [a-z], no '/'); at most 256 items"),
        new Hostile("pattern matching every name", "reap:\n  patterns: [\"*\"]\n", 2, "reap.patterns",
            "\"*\" would match almost any name",
            "a list of file name patterns such as \"nccl-*\" (* ? and [a-z], no '/'), each beginning with at least 4 literal characters"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("hostileFiles")
  void aHostileFileStopsEveryCommandQuicklyWithOneLine(Hostile h, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("shmguard.yaml");
    Files.writeString(file, h.text());
    String where = file + ":" + h.line() + ": " + (h.key() == null ? "" : h.key() + ": ");

    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      for (String command : new String[] {"daemon", "scan"}) {
        CliRun run = CliRun.of(command, "--config", file.toString());

        assertThat(run.status()).as(command).isEqualTo(78);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).as(command).startsWith("shmguard: bad configuration: " + where).contains(h.problem())
            .contains("; allowed: " + h.allowed()).endsWith("\n").hasLineCount(1);
      }
      // check speaks node-problem-detector's protocol: a bad configuration is "unknown" (2), said on stdout.
      CliRun check = CliRun.of("check", "--config", file.toString());
      assertThat(check.status()).isEqualTo(2);
      assertThat(check.out()).startsWith("unknown: bad configuration: " + where).contains("; allowed: " + h.allowed()).hasLineCount(1);
    });
  }

  @Test
  void underTheUnitsJvmLimitsTheDaemonProcessExits78NotWithAStackOverflowOrOutOfMemory(@TempDir Path dir) throws Exception {
    for (Hostile h : hostileFiles().limit(4).toList()) {
      Path file = dir.resolve(h.name().replace(' ', '-') + ".yaml");
      Files.writeString(file, h.text());
      // The heap, stack and GC of systemd/shmguard.service.
      Process daemon = new ProcessBuilder(Sandbox.javaBinary(), "-XX:+UseSerialGC", "-Xmx96m", "-Xss512k",
          "-XX:+ExitOnOutOfMemoryError", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "org.shmguard.cli.Main", "daemon", "--config", file.toString())
          .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
          .redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile()).start();
      try {
        assertThat(daemon.waitFor(60, TimeUnit.SECONDS)).as(h.name() + ": exited").isTrue();
        assertThat(daemon.exitValue()).as(h.name()).isEqualTo(78);
        assertThat(Files.readString(dir.resolve("err"))).as(h.name())
            .startsWith("shmguard: bad configuration: " + file + ":" + h.line() + ": ").contains("; allowed: " + h.allowed()).hasLineCount(1);
      } finally {
        daemon.destroyForcibly().waitFor();
      }
    }
  }

  @Test
  void aFifoAtTheConfigPathStopsTheDaemonAtOnce(@TempDir Path dir) {
    Path fifo = dir.resolve("shmguard.yaml");
    Cmd.run("mkfifo", fifo.toString());
    CliRun run = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> CliRun.of("daemon", "--config", fifo.toString()));
    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err().strip()).isEqualTo("shmguard: bad configuration: " + fifo
        + ": this path leads to a FIFO, which shmguard does not read; allowed: a regular file (or a link to one)");
  }

  @Test
  void unknownOptionIsAUsageErrorWithStatus2() {
    CliRun run = CliRun.of("scan", "--frobnicate");
    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err()).startsWith("shmguard scan: unknown option '--frobnicate'").hasLineCount(2);
  }
}
