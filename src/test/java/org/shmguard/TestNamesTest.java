package org.shmguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The test of a class is found by its path: every main class over {@value #LINES} lines has a test
 * named after it in the same package ({@code host/Observer.java} → {@code host/ObserverTest.java}),
 * or, where that test needs root, in the package of the same name under {@code it}
 * ({@code it/host/ObserverTest.java}), except those in {@link #NOT_YET}, the short list of what is
 * left. A new big class without its test fails here, and so does an entry of the list that is no
 * longer needed. And the split of {@code mvn test} from {@code mvn verify} holds: a test outside
 * {@code it} that uses a helper needing root, a namespace, a mount or a child process is named in
 * src/test/scenario-tests.txt (so that only {@code mvn verify} runs it), and that list names only
 * such tests.
 */
class TestNamesTest {
  private static final Path MAIN = Path.of("src/main/java");
  private static final Path TEST = Path.of("src/test/java");
  private static final Path IT = TEST.resolve("org/shmguard/it");
  private static final Path HELPERS = TEST.resolve("org/shmguard/testing");
  private static final Path SCENARIOS = Path.of("src/test/scenario-tests.txt");
  private static final int LINES = 150;

  /**
   * What a unit test may not use: the helpers that mount, start processes or need root, processes
   * of its own, and configuration files under the sandbox's /run (TestConfig.parse needs none). A
   * test that needs one is a scenario test.
   */
  private static final Pattern NEEDS_THE_SANDBOX = Pattern.compile(
      "\\bimport org\\.shmguard\\.testing\\.(Sandbox|TmpfsMount|Holder|HolderProcess|CProgram|Cmd|Docker|Podman"
      + "|RuntimeTeardown|ContainersDirs|FuseFixture|PidNsCreator|ThreadHolder|UserNsAttacker|KubeletLayout|PodRestartLoop"
      + "|SlurmNode|PyClient|PythonRoot|JreRoot|Journald|SocketClient);|\\bnew\\s+ProcessBuilder\\b"
      + "|\\bRuntime\\.getRuntime\\(\\)\\.exec\\b|\\bTestConfig\\.(write|watching)\\(");

  /** Main classes over the limit that have no test named after them yet (path under org/shmguard). */
  private static final Set<String> NOT_YET = Set.of();

  @Test
  void everyBigClassHasATestNamedAfterIt() throws IOException {
    List<String> missing = untested().stream().filter(c -> !NOT_YET.contains(c)).toList();
    assertThat(missing).as("main classes over %d lines without a test of the same name beside them (%s): write"
        + " the test, or rename the test that already tests the class", LINES, TEST).isEmpty();
  }

  @Test
  void theListOfWhatIsLeftNamesOnlyWhatIsLeft() throws IOException {
    Set<String> untested = untested();
    List<String> stale = NOT_YET.stream().filter(c -> !untested.contains(c)).sorted().toList();
    assertThat(stale).as("entries of TestNamesTest.NOT_YET that now have their test, are gone or are short:"
        + " remove them").isEmpty();
  }

  @Test
  void aTestOutsideItThatNeedsTheSandboxIsAScenarioTestAndOnlySuchTestsAreListed() throws IOException {
    Set<String> listed = new TreeSet<>();
    for (String line : Files.readAllLines(SCENARIOS)) {
      if (!line.isBlank() && !line.startsWith("#")) {
        listed.add(line.strip());
      }
    }
    Set<String> needing = new TreeSet<>();
    try (Stream<Path> files = Files.walk(TEST.resolve("org/shmguard"))) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        if (!f.startsWith(IT) && !f.startsWith(HELPERS) && NEEDS_THE_SANDBOX.matcher(Files.readString(f)).find()) {
          needing.add(TEST.relativize(f).toString());
        }
      }
    }
    assertThat(needing).as("tests outside it/ that need the sandbox (root, a mount, a child process) but that mvn test"
        + " runs: move them to it/FEATURE/, or, where they use a package-private member, name them in %s", SCENARIOS)
        .isSubsetOf(listed);
    assertThat(listed).as("entries of %s that are not tests outside it/ needing the sandbox: remove them", SCENARIOS)
        .isSubsetOf(needing);
  }

  /** Main classes (paths under org/shmguard) over the limit without src/test/java/.../NameTest.java. */
  private static Set<String> untested() throws IOException {
    Path root = MAIN.resolve("org/shmguard");
    Set<String> found = new TreeSet<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
        String rel = root.relativize(f).toString();
        String testName = rel.replaceFirst("\\.java$", "Test.java");
        Path test = TEST.resolve("org/shmguard").resolve(testName);
        if (lines(f) > LINES && !Files.exists(test) && !Files.exists(IT.resolve(testName))) {
          found.add(rel);
        }
      }
    }
    return found;
  }

  private static long lines(Path f) throws IOException {
    try (Stream<String> l = Files.lines(f)) {
      return l.count();
    }
  }
}
