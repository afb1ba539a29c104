package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * The walk from "/" that {@link RootDirectory#open} makes, on real directories: "..", root's
 * relative and absolute links on the way, a loop of links, a file where a directory should be,
 * and no descriptor left open whatever it finds. (Whose directories and links it accepts is
 * RootDirectoryTest's.)
 */
class DirectoryWalkTest {
  private Path base;

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    base = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "walk-");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void tearDown() {
    if (base != null) {
      Cmd.run("rm", "-rf", base.toString());
    }
  }

  @Test
  void dotDotAndRootsLinksLeadWhereTheyPointRelativeOrAbsolute() throws IOException {
    Path real = Files.createDirectories(base.resolve("a/real"));
    Files.createSymbolicLink(base.resolve("rel"), Path.of("a/real"));
    Files.createSymbolicLink(base.resolve("abs"), real);
    Files.createSymbolicLink(base.resolve("a/up"), Path.of("../rel"));

    for (Path way : new Path[] {base.resolve("a/real/../real"), base.resolve("rel"), base.resolve("abs"), base.resolve("a/up")}) {
      try (RootDirectory d = RootDirectory.open(way, false)) {
        d.replaceFile("through", way.toString().getBytes(StandardCharsets.UTF_8), 0600);
      }
      assertThat(real.resolve("through")).as("reached through %s", way).hasContent(way.toString());
    }
  }

  @Test
  void aLoopOfLinksIsRefusedAfter32() throws IOException {
    Files.createSymbolicLink(base.resolve("ping"), Path.of("pong"));
    Files.createSymbolicLink(base.resolve("pong"), Path.of("ping"));

    assertThatThrownBy(() -> RootDirectory.open(base.resolve("ping/x"), true))
        .hasMessageEndingWith(": more than 32 symbolic links on the way");
  }

  @Test
  void aFileWhereADirectoryShouldBeIsSaidSo() throws IOException {
    Files.writeString(base.resolve("file"), "x");

    assertThatThrownBy(() -> RootDirectory.open(base.resolve("file/below"), true))
        .hasMessage(base.resolve("file") + " is not a directory");
    assertThatThrownBy(() -> RootDirectory.open(base.resolve("file"), false))
        .hasMessage(base.resolve("file") + " is not a directory");
  }

  @Test
  void noDescriptorIsLeftOpenWhetherTheWalkArrivesOrIsRefused() throws IOException {
    Path everyone = Files.createDirectories(base.resolve("x/y/everyone"));
    Files.setPosixFilePermissions(everyone, PosixFilePermissions.fromString("rwxrwxrwx"));
    Files.createDirectories(base.resolve("x/y/z"));
    long before = openFds();

    for (int i = 0; i < 20; i++) {
      try (RootDirectory d = RootDirectory.open(base.resolve("x/y/z"), false)) {
        assertThat(d.mode()).isEqualTo(0755);
      }
      assertThatThrownBy(() -> RootDirectory.open(everyone.resolve("w"), true)).isInstanceOf(IOException.class);
    }

    // 40 walks: one descriptor left by each would show as 20 or more; the JVM's own may come and go
    assertThat(openFds()).isLessThan(before + 10);
  }

  private static long openFds() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    }
  }
}
