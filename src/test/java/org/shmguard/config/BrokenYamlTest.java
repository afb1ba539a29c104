package org.shmguard.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.shmguard.testing.CliRun;

/**
 * What an operator sees for a file that is not valid YAML, or that has several mistakes: one line
 * per mistake with the file and line, what is wrong and what to do; exit 78; never a stack trace.
 */
class BrokenYamlTest {

  /** A broken file, the line the operator must look at, and words the message must hold. */
  record Broken(String name, String text, int line, String says) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Broken> brokenFiles() {
    return Stream.of(
        new Broken("a key indented deeper than its sibling", "reap:\n  grace: 2m\n   dryRun: true\n", 3,
            "is this line indented deeper than the key above it"),
        new Broken("a key indented less than its sibling", "reap:\n  grace: 2m\n dryRun: true\n", 3,
            "this line's indentation matches no key above it"),
        new Broken("an unclosed quote", "reap:\n  grace: \"2m\n  dryRun: true\n", 2,
            "a quoted value opened on line 2 is never closed"),
        new Broken("a tab as indentation", "reap:\n\tgrace: 2m\n", 2, "a tab where YAML allows only spaces; indent with spaces"),
        new Broken("an unclosed list", "reap:\n  patterns: [nccl-*\n", 3, "(while parsing a flow sequence on line 2)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("brokenFiles")
  void brokenYamlIsOneLineWithFileAndLineAndNoStackTrace(Broken b, @TempDir Path dir) throws Exception {
    Path file = dir.resolve("shmguard.yaml");
    Files.writeString(file, b.text());

    for (String command : new String[] {"scan", "clean", "daemon"}) {
      CliRun run = CliRun.of(command, "--config", file.toString());

      assertThat(run.status()).as(command).isEqualTo(78);
      assertThat(run.out()).isEmpty();
      assertThat(run.err()).as(command).startsWith("shmguard: bad configuration: " + file + ":" + b.line() + ": ")
          .contains("not valid YAML: ").contains(b.says()).hasLineCount(1)
          .doesNotContain("Exception").doesNotContain("\tat ").doesNotContain("^");
    }
  }

  @Test
  void everyBadKeyInAFileIsReportedAtOnceEachWithItsLineAndWhatIsAllowed(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("shmguard.yaml");
    Files.writeString(file, "reap:\n  grace: soon\n  dryrun: true\ncapacity:\n  warn: 200\n");

    CliRun run = CliRun.of("scan", "--config", file.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err().lines()).containsExactly(
        "shmguard: bad configuration: " + file + ":2: reap.grace: \"soon\" is not a duration; allowed: a duration from 0ms "
            + "to 30d: a whole number with a unit ms, s, m, h or d (such as 500ms, 30s, 2m)",
        "shmguard: bad configuration: " + file + ":3: reap.dryrun: unknown key (did you mean dryRun? keys are case-sensitive); "
            + "allowed under reap: deny, dryRun, examineLimit, examineTotal, grace, patterns, requireHostPidNamespace",
        "shmguard: bad configuration: " + file + ":5: capacity.warn: 200 is out of range; allowed: a whole number from 1 to 100");
  }

  @Test
  void everyBrokenRuleBetweenKeysIsReportedAtOnce(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("shmguard.yaml");
    Files.writeString(file, "capacity:\n  warn: 90\n  critical: 80\ndaemon:\n  interval: 5s\n  settle: 5s\n");

    CliRun run = CliRun.of("daemon", "--config", file.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err()).hasLineCount(2)
        .contains(file + ":3: capacity.critical: 80 must be above capacity.warn (90)")
        .contains(file + ":6: daemon.settle: 5s is not shorter than daemon.interval (5s)");
  }

  @Test
  void aParserFailureOfAnyOtherKindStillBecomesOneLine() {
    ConfigException e = YamlSyntax.unexpected("/etc/shmguard/shmguard.yaml",
        new IllegalStateException("while parsing something\n in 'reader', line 7, column 3:\n      bad\n      ^"));

    assertThat(e.format()).isEqualTo("/etc/shmguard/shmguard.yaml:7: not valid YAML: while parsing something");
  }
}
