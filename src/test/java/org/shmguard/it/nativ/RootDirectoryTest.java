package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * The directory handle root writes through, on real directories: what it refuses, what it makes,
 * and that nothing planted at a name it writes is followed, opened or chmod'ed.
 */
class RootDirectoryTest {
  private Path base;
  private Path victim;

  @BeforeEach
  void setUp() throws IOException {
    Sandbox.require();
    base = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "rootdir-");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path secrets = Files.createDirectory(base.resolve("secrets"));
    victim = Files.writeString(secrets.resolve("victim"), "root only\n");
    Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
  }

  @AfterEach
  void tearDown() {
    if (base != null) {
      Cmd.run("rm", "-rf", base.toString());
    }
  }

  @Test
  void aFileReplacesALinkAtItsNameAndTheLinksTargetIsUntouched() throws IOException {
    Path dir = Files.createDirectory(base.resolve("out"));
    Files.createSymbolicLink(dir.resolve("shmguard.prom"), victim);

    try (RootDirectory d = RootDirectory.open(dir, false)) {
      d.replaceFile("shmguard.prom", "metrics\n".getBytes(StandardCharsets.UTF_8), 0644);
    }

    assertVictimUntouched();
    assertThat(dir.resolve("shmguard.prom")).isRegularFile().hasContent("metrics");
    assertThat(mode(dir.resolve("shmguard.prom"))).isEqualTo("rw-r--r--");
    assertThat(Files.getAttribute(dir.resolve("shmguard.prom"), "unix:uid")).isEqualTo(0);
    try (var files = Files.list(dir)) {
      assertThat(files).as("no temporary file left").containsExactly(dir.resolve("shmguard.prom"));
    }
  }

  @Test
  void aFifoAtTheNameIsReplacedAtOnceNeverOpened() throws IOException {
    Path dir = Files.createDirectory(base.resolve("out"));
    Cmd.run("mkfifo", dir.resolve("advice.env").toString());

    assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
      try (RootDirectory d = RootDirectory.open(dir, false)) {
        d.replaceFile("advice.env", "A=1\n".getBytes(StandardCharsets.UTF_8), 0644);
      }
    });

    assertThat(dir.resolve("advice.env")).isRegularFile().hasContent("A=1");
  }

  @Test
  void aDirectoryAtTheNameIsAnErrorAndLeavesNothingBehind() throws IOException {
    Path dir = Files.createDirectory(base.resolve("out"));
    Files.createDirectory(dir.resolve("shmguard.prom"));

    try (RootDirectory d = RootDirectory.open(dir, false)) {
      assertThatThrownBy(() -> d.replaceFile("shmguard.prom", new byte[] {1}, 0644))
          .isInstanceOf(IOException.class).hasMessageContaining("rename over " + dir.resolve("shmguard.prom"));
    }
    try (var files = Files.list(dir)) {
      assertThat(files).containsExactly(dir.resolve("shmguard.prom"));
    }
  }

  @Test
  void directoriesOthersCanChangeAreRefusedWithTheReason() throws IOException {
    Path everyone = Files.createDirectory(base.resolve("everyone"));
    Files.setPosixFilePermissions(everyone, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path group = Files.createDirectory(base.resolve("group"));
    Files.setPosixFilePermissions(group, PosixFilePermissions.fromString("rwxrwxr-x"));
    Path users = Files.createDirectory(base.resolve("users"));
    Cmd.run("chown", "65534:65534", users.toString());
    Path below = Files.createDirectory(everyone.resolve("below"));

    assertThatThrownBy(() -> RootDirectory.open(everyone, false)).hasMessageContaining(everyone + " is writable by every user");
    assertThatThrownBy(() -> RootDirectory.open(group, false)).hasMessageContaining(group + " is writable by its group");
    assertThatThrownBy(() -> RootDirectory.open(users, true)).hasMessageContaining(users + " is owned by uid 65534, not root");
    assertThatThrownBy(() -> RootDirectory.open(below, false)).as("a directory on the way counts too")
        .hasMessageContaining(everyone + " is writable by every user");
    assertThatThrownBy(() -> RootDirectory.open(users.resolve("shmguard"), true)).hasMessageContaining("owned by uid 65534");
    assertThat(users.resolve("shmguard")).as("nothing made in another user's directory").doesNotExist();
  }

  @Test
  void aStickyDirectoryMayBePassedButNotWrittenIn() throws IOException {
    Path sticky = Files.createDirectory(base.resolve("tmp"));
    Cmd.run("chmod", "1777", sticky.toString());
    Path inside = Files.createDirectory(sticky.resolve("root-only"));

    try (RootDirectory d = RootDirectory.open(inside, false)) {
      assertThat(d.mode()).isEqualTo(0755);
    }
    assertThatThrownBy(() -> RootDirectory.open(sticky, false)).hasMessageContaining(sticky + " is writable by every user");
  }

  @Test
  void onlyRootsLinksAreFollowedOnTheWay() throws IOException {
    Path sticky = Files.createDirectory(base.resolve("tmp"));
    Cmd.run("chmod", "1777", sticky.toString());
    Path real = Files.createDirectory(base.resolve("real"));
    Files.createSymbolicLink(base.resolve("alias"), Path.of("real")); // root's, relative
    asNobody("ln", "-s", real.toString(), sticky.resolve("evil").toString());

    try (RootDirectory d = RootDirectory.open(base.resolve("alias"), false)) {
      d.replaceFile("f", "x".getBytes(StandardCharsets.UTF_8), 0600);
    }
    assertThat(real.resolve("f")).hasContent("x");
    assertThatThrownBy(() -> RootDirectory.open(sticky.resolve("evil"), true))
        .hasMessageContaining(sticky.resolve("evil") + " is a symbolic link owned by uid 65534");
  }

  @Test
  void missingDirectoriesAreMadeRootsAnd0755() throws IOException {
    Path deep = base.resolve("run/shmguard");

    try (RootDirectory d = RootDirectory.open(deep, true)) {
      assertThat(d.mode()).isEqualTo(0755);
    }

    assertThat(mode(base.resolve("run"))).isEqualTo("rwxr-xr-x");
    assertThat(mode(deep)).isEqualTo("rwxr-xr-x");
    assertThat(Files.getAttribute(deep, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0);
    assertThatThrownBy(() -> RootDirectory.open(base.resolve("absent"), false)).hasMessageContaining("No such file");
  }

  @Test
  void aSocketIsBoundThroughTheHandleWithItsModeAndReplacesALink() throws IOException {
    Path dir = Files.createDirectory(base.resolve("run"));
    Files.createSymbolicLink(dir.resolve("advice.sock"), victim);

    try (RootDirectory d = RootDirectory.open(dir, false);
        ServerSocketChannel ch = d.bindSocket("advice.sock", 0666, 4)) {
      assertThat(Files.isSymbolicLink(dir.resolve("advice.sock"))).isFalse();
      assertThat(Files.getAttribute(dir.resolve("advice.sock"), "unix:mode", LinkOption.NOFOLLOW_LINKS))
          .isEqualTo(0140666);
      assertThat(ch.isOpen()).isTrue();
    }
    assertVictimUntouched();
  }

  private void assertVictimUntouched() throws IOException {
    assertThat(Files.isSymbolicLink(victim)).isFalse();
    assertThat(victim).hasContent("root only");
    assertThat(mode(victim)).isEqualTo("rw-------");
    assertThat(Files.getAttribute(victim, "unix:uid")).isEqualTo(0);
  }

  private static String mode(Path p) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  private static void asNobody(String... command) {
    String[] full = new String[command.length + 4];
    full[0] = "setpriv";
    full[1] = "--reuid=65534";
    full[2] = "--regid=65534";
    full[3] = "--clear-groups";
    System.arraycopy(command, 0, full, 4, command.length);
    Cmd.run(full);
  }
}
