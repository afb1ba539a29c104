package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountDiscovery;
import org.shmguard.model.Dev;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * Discovery on the sandbox's real mounts: the host's /dev/shm, a container's, configured mounts,
 * and what it only reports (a directory of a tmpfs, a user's own namespace) or leaves out (beyond
 * the report limit). Scenarios through the CLI are in it/DiscoveryReachTest.
 */
class MountDiscoveryTest {
  private static final HostPaths HOST = HostPaths.system();

  @Test
  void theHostsDevShmIsFoundThroughItsOwnPathAndMayBeActedIn() {
    Sandbox.require();
    MountDiscovery.Result r = new MountDiscovery(HOST).discover(true, List.of());

    ShmMount host = only(r.mounts(), MountOrigin.HOST);
    assertThat(host.path()).isEqualTo("/dev/shm");
    assertThat(host.dev()).isEqualTo(devOf("/dev/shm"));
    assertThat(host.mayAct()).isTrue();
    assertThat(host.ownerUid()).isZero();
    assertThat(r.namespacesLeftOut()).isZero();
  }

  @Test
  void aContainersDevShmIsFoundThroughOneOfItsProcessesAndNamedByItsNamespace() {
    try (Holder container = Holder.startInContainer("size=2m")) {
      String shm = "/proc/" + container.pid() + "/root/dev/shm";
      MountDiscovery.Result r = new MountDiscovery(HOST).discover(true, List.of());

      ShmMount m = r.mounts().stream().filter(x -> x.dev().equals(devOf(shm))).findFirst()
          .orElseThrow(() -> new AssertionError("no mount of " + shm + " in " + r));
      assertThat(m.origin()).isEqualTo(MountOrigin.NAMESPACE);
      assertThat(m.mountPoint()).isEqualTo("/dev/shm");
      assertThat(m.pids()).contains(container.pid()); // and unshare's, which entered the namespace first
      assertThat(m.path()).isIn(m.pids().stream().map(p -> "/proc/" + p + "/root/dev/shm").toList());
      assertThat(m.namespace()).isEqualTo(Cmd.run("readlink", "/proc/" + container.pid() + "/ns/mnt").strip());
      assertThat(m.mayAct()).isTrue();
    }
  }

  @Test
  void aConfiguredTmpfsIsWatchedAndAnythingElseConfiguredIsSaidWhyNot() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Path plain = Files.createDirectories(shm.path().resolve("plain"));
      MountDiscovery.Result r = new MountDiscovery(HOST).discover(false, List.of(shm.path().toString(), plain.toString(), "/proc"));

      assertThat(r.mounts()).singleElement().satisfies(m -> {
        assertThat(m.origin()).isEqualTo(MountOrigin.CONFIGURED);
        assertThat(m.path()).isEqualTo(shm.path().toString());
        assertThat(m.dev()).isEqualTo(shm.dev());
        assertThat(m.mayAct()).isTrue();
      });
      assertThat(r.warnings()).containsExactly("configured mount " + plain + " is not a mount point; not watched",
          "configured mount /proc is proc, not tmpfs; not watched");
    }
  }

  @Test
  void aMountOfADirectoryOfATmpfsIsOnlyReported() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      Path sub = Files.createDirectories(shm.path().resolve("sub"));
      Path bind = Files.createDirectories(Sandbox.MOUNTS.resolve("bind-" + ProcessHandle.current().pid()));
      Cmd.run("mount", "--bind", sub.toString(), bind.toString());
      try {
        MountDiscovery.Result r = new MountDiscovery(HOST).discover(false, List.of(bind.toString()));

        assertThat(r.mounts()).singleElement().satisfies(m -> {
          assertThat(m.dev()).isEqualTo(shm.dev());
          assertThat(m.mayAct()).isFalse();
          assertThat(m.reportOnly()).contains("it shows the directory /sub of its tmpfs");
        });
      } finally {
        Cmd.exec("umount", bind.toString());
        Files.deleteIfExists(bind);
      }
    }
  }

  @Test
  void aUsersOwnNamespaceIsReportedWithinTheLimitAndOnlyCountedBeyondIt() throws Exception {
    try (UserNsAttacker user = UserNsAttacker.ownFullShm()) {
      Dev dev = devOf("/proc/" + user.pid() + "/root/dev/shm");

      MountDiscovery.Result within = new MountDiscovery(HOST, false, 1).discover(true, List.of());
      ShmMount m = within.mounts().stream().filter(x -> x.dev().equals(dev)).findFirst()
          .orElseThrow(() -> new AssertionError("no mount of device " + dev + " in " + within));
      assertThat(m.mayAct()).isFalse();
      assertThat(m.reportOnly()).contains("owned by user namespace");
      assertThat(m.ownerUid()).isEqualTo(65534L);
      assertThat(within.namespacesLeftOut()).isZero();

      MountDiscovery.Result beyond = new MountDiscovery(HOST, false, 0).discover(true, List.of());
      assertThat(beyond.mounts()).noneMatch(x -> x.dev().equals(dev));
      assertThat(beyond.namespacesLeftOut()).isEqualTo(1);

      MountDiscovery.Result acting = new MountDiscovery(HOST, true, 1).discover(true, List.of());
      assertThat(acting.mounts()).filteredOn(x -> x.dev().equals(dev)).singleElement()
          .satisfies(x -> assertThat(x.mayAct()).isTrue());
    }
  }

  private static ShmMount only(List<ShmMount> mounts, MountOrigin origin) {
    return mounts.stream().filter(m -> m.origin() == origin).reduce((a, b) -> {
      throw new AssertionError("two mounts of origin " + origin + ": " + mounts);
    }).orElseThrow(() -> new AssertionError("no mount of origin " + origin + ": " + mounts));
  }

  private static Dev devOf(String path) {
    String[] majorMinor = Cmd.run("stat", "-L", "-c", "%Hd %Ld", path).strip().split(" ");
    return Dev.of(Integer.parseInt(majorMinor[0]), Integer.parseInt(majorMinor[1]));
  }
}
