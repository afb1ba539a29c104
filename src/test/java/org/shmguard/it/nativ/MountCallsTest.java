package org.shmguard.it.nativ;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.host.MountEntry;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.MountCalls;
import org.shmguard.nativ.MountHandle;
import org.shmguard.nativ.MountIdentity;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * The mount system calls on real mounts and namespaces: what a handle on a mount's root tells
 * (and on a directory below it, and on a link), its usage, growing a tmpfs through it, and who
 * owns a mount namespace.
 */
class MountCallsTest {

  @Test
  void aHandleOnATmpfsRootNamesItsMountAndDevice() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m");
        MountHandle root = MountCalls.get().openMountRoot(shm.path().toString())) {
      Files.createDirectory(shm.file("sub"));
      MountIdentity id = root.identity();

      assertThat(id.devMajor()).isEqualTo(shm.dev().major());
      assertThat(id.devMinor()).isEqualTo(shm.dev().minor());
      assertThat(id.mountRoot()).isTrue();
      assertThat(id.directory()).isTrue();
      assertThat(id.mountId()).isEqualTo(mountIdOf(shm.path()));
      assertThat(id.isRootOf(id.mountId(), id.devMajor(), id.devMinor())).isTrue();
      try (MountHandle sub = MountCalls.get().openMountRoot(shm.file("sub").toString())) {
        MountIdentity below = sub.identity();
        assertThat(below.mountRoot()).isFalse();
        assertThat(below.mountId()).isEqualTo(id.mountId());
        assertThat(below.isRootOf(id.mountId(), id.devMajor(), id.devMinor())).isFalse();
      }
    }
  }

  @Test
  void aLinkOrAFileIsNotOpenedAsAMountRoot() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Files.createSymbolicLink(shm.file("link"), shm.path());
      Files.writeString(shm.file("file"), "x");

      assertThatThrownBy(() -> MountCalls.get().openMountRoot(shm.file("link").toString()))
          .isInstanceOf(IOException.class).hasMessageContaining("open " + shm.file("link"));
      assertThatThrownBy(() -> MountCalls.get().openMountRoot(shm.file("file").toString()))
          .isInstanceOf(IOException.class).hasMessageContaining("open " + shm.file("file"));
    }
  }

  @Test
  void usageIsStatvfsAndTheSizeGrowsThroughTheHandle() throws IOException {
    try (TmpfsMount shm = TmpfsMount.create("size=1m");
        MountHandle root = MountCalls.get().openMountRoot(shm.path().toString())) {
      shm.createSegment("nccl-Usage", 256 * 1024);
      FsUsage before = root.usage();
      assertThat(before.sizeBytes()).isEqualTo(1L << 20);
      assertThat(before.sizeBytes() - before.freeBytes()).isEqualTo(256 * 1024);

      root.reconfigureSize(4L << 20);

      assertThat(root.usage().sizeBytes()).isEqualTo(4L << 20);
      assertThat(Cmd.run("findmnt", "-n", "-o", "OPTIONS", shm.path().toString())).contains("size=4096k");
      assertThat(Files.readAllBytes(shm.file("nccl-Usage"))).hasSize(256 * 1024);
    }
  }

  @Test
  void theHostsMountNamespaceIsOwnedByUid0AndAUsersOwnByThatUser() throws IOException {
    MountCalls.Owner own = MountCalls.get().mountNamespaceOwner("/proc/self/ns/mnt");
    assertThat(own.uid()).isZero();
    assertThat(own.userNamespace()).isEqualTo(MountCalls.get().namespaceOf("/proc/self/ns/user"));

    try (UserNsAttacker user = UserNsAttacker.ownFullShm()) {
      MountCalls.Owner theirs = MountCalls.get().mountNamespaceOwner("/proc/" + user.pid() + "/ns/mnt");
      assertThat(theirs.uid()).isEqualTo(65534L);
      assertThat(theirs.userNamespace()).isEqualTo(MountCalls.get().namespaceOf("/proc/" + user.pid() + "/ns/user"))
          .isNotEqualTo(own.userNamespace());
      assertThat(MountCalls.get().ownerOfMountNamespace("/proc/" + user.pid() + "/ns/mnt")).isEqualTo(theirs.userNamespace());
    }
    assertThatThrownBy(() -> MountCalls.get().mountNamespaceOwner("/proc/self/ns/nothing"))
        .isInstanceOf(IOException.class).hasMessageContaining("/proc/self/ns/nothing");
  }

  private static long mountIdOf(Path mountPoint) throws IOException {
    long id = -1;
    for (MountEntry e : MountEntry.parseAll(Files.readString(Path.of("/proc/self/mountinfo")))) {
      if (e.mountPoint().equals(mountPoint.toString())) {
        id = e.mountId();
      }
    }
    return id;
  }
}
