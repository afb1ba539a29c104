package org.shmguard.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/** The advice socket's file on real directories: stale ones replaced, others' directories refused, only its own removed. */
class SocketFileTest {
  private Path base;

  @BeforeEach
  void setUp() throws Exception {
    Sandbox.require();
    base = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "socketfile-");
    Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterEach
  void tearDown() {
    if (base != null) {
      Cmd.run("rm", "-rf", base.toString());
    }
  }

  @Test
  void aStaleSocketIsReplacedAndTheNewOneIs0666() throws Exception {
    Path path = base.resolve("advice.sock");
    try (ServerSocketChannel old = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      old.bind(UnixDomainSocketAddress.of(path)); // closed below without removing its file: stale
    }
    Object staleInode = Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);

    try (SocketFile f = SocketFile.bind(path, 4)) {
      assertThat(Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS)).isNotEqualTo(staleInode);
      assertThat(Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0140666);
      assertThat(f.channel().isOpen()).isTrue();
    }
    assertThat(path).as("removed on close").doesNotExist();
  }

  @Test
  void aSocketDirectoryThatIsAnotherUsersLinkIsRefusedAndNothingIsMadeThere() throws Exception {
    Path tmp = Files.createDirectory(base.resolve("tmp"));
    Cmd.run("chmod", "1777", tmp.toString());
    Path users = Files.createDirectory(base.resolve("home"));
    Cmd.run("chown", "65534:65534", users.toString());
    Cmd.run("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ln", "-s", users.toString(),
        tmp.resolve("shmguard").toString());

    assertThatThrownBy(() -> SocketFile.bind(tmp.resolve("shmguard/advice.sock"), 4))
        .hasMessageContaining(tmp.resolve("shmguard") + " is a symbolic link owned by uid 65534");
    try (var files = Files.list(users)) {
      assertThat(files).isEmpty();
    }
  }

  @Test
  void closeLeavesAFileThatIsNoLongerItsSocket() throws Exception {
    Path path = base.resolve("advice.sock");
    SocketFile f = SocketFile.bind(path, 4);
    Files.delete(path);
    Files.writeString(path, "not the socket");

    f.close();

    assertThat(path).hasContent("not the socket");
  }
}
