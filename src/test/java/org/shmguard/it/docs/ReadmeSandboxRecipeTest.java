package org.shmguard.it.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Sandbox;

/**
 * The README's "Try it safely" recipe, run exactly as printed (the sh block under that heading,
 * taken from README.md), as root from this checkout, inside the test sandbox: the leak it makes is
 * listed by scan, reaped by the daemon in its first pass, and nothing is left in its /dev/shm.
 */
class ReadmeSandboxRecipeTest {
  private static final Path JAR = Path.of("target/shmguard.jar");

  /** The first ```sh block after the "### Try it safely" heading. */
  static String recipe() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    int heading = readme.indexOf("\n### Try it safely\n");
    assertThat(heading).as("README.md has a \"Try it safely\" section").isPositive();
    int start = readme.indexOf("```sh\n", heading) + "```sh\n".length();
    return readme.substring(start, readme.indexOf("```\n", start));
  }

  @Test
  void theRecipeAsPrintedReapsItsOwnLeakAndNothingElse() throws Exception {
    Sandbox.require();
    assumeTrue(Files.isRegularFile(JAR), "no target/shmguard.jar: build it first with mvn -DskipTests package (.ci/run does)");
    String script = recipe();
    assertThat(script).contains("requireHostPidNamespace: false").contains("java -jar target/shmguard.jar");
    Path marker = Files.writeString(Path.of("/dev/shm/nccl-NotTheRecipes"), "the sandbox's own /dev/shm, outside the recipe's");
    Process p = new ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start();
    try {
      byte[] out = p.getInputStream().readAllBytes(); // the recipe ends by itself: its daemon has a 30 s timeout
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
      String text = new String(out, StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as(text).isZero();
      assertThat(text).as(text).containsPattern("nccl-TryMe1 .*leaked")
          .contains("reaped /dev/shm/nccl-TryMe1")
          .doesNotContain("reaps nothing");
      assertThat(text).as("ls -A /dev/shm prints nothing").doesNotContainPattern("(?m)^nccl-TryMe1$");
      assertThat(marker).as("the recipe never touched a /dev/shm but its own").exists();
    } finally {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor();
      Files.deleteIfExists(marker);
    }
  }
}
