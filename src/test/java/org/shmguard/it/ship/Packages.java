package org.shmguard.it.ship;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;

/** The packages `mvn -Ppackages package` left in target/, for tests that inspect them. */
final class Packages {
  static final Path TARGET = Path.of("target");

  private Packages() {}

  static Path deb() {
    return find("shmguard_", ".deb");
  }

  static Path rpm() {
    return find("shmguard-", ".noarch.rpm");
  }

  static void requireTool(String path) {
    assumeTrue(Files.isExecutable(Path.of(path)), path + " is not installed (.ci/run installs it)");
  }

  private static Path find(String prefix, String suffix) {
    Optional<Path> found;
    try (Stream<Path> files = Files.list(TARGET)) {
      found = files.filter(p -> p.getFileName().toString().startsWith(prefix) && p.getFileName().toString().endsWith(suffix))
          .max((a, b) -> Long.compare(a.toFile().lastModified(), b.toFile().lastModified()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assumeTrue(found.isPresent(), "no target/" + prefix + "*" + suffix + ": build it first with "
        + "mvn -B -Ppackages -DskipTests package (.ci/run does)");
    return found.get();
  }
}
