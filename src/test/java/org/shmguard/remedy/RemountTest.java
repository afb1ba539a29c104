package org.shmguard.remedy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountEntry;
import org.shmguard.host.MountReach;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.MountHandle;
import org.shmguard.policy.RemountPolicy;
import org.shmguard.text.SizeSpec;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Remounts of real tmpfs instances, checked in mountinfo: grown with every option kept, or refused. */
class RemountTest {
  private static final long MIB = 1L << 20;
  private static final String OPTIONS = "size=1m,mode=1770,uid=65534,gid=65534,nr_inodes=1000,nosuid,nodev,noexec";
  private TmpfsMount shm;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create(OPTIONS);
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  @Test
  void growsToTheTargetKeepingEveryOtherOption() throws IOException {
    Remounter r = remounter(4 * MIB, 8 * MIB, Duration.ofHours(1));
    RemountOutcome o = r.grow(watched(), null, "test");

    assertThat(o.result()).as(o.detail()).isEqualTo(RemountOutcome.Result.GROWN);
    MountEntry e = mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString());
    assertThat(e.mountOptions().split(",")).contains("rw", "nosuid", "nodev", "noexec");
    assertThat(e.superOptions().split(",")).contains("size=4096k", "nr_inodes=1000", "mode=1770", "uid=65534", "gid=65534");
    assertThat(o.toBytes()).isEqualTo(4 * MIB);
    assertThat(o.optionsBefore()).contains("size=1024k", "nosuid");
    assertThat(o.optionsAfter()).contains("size=4096k", "nosuid", "mode=1770");
  }

  @Test
  void aShrinkIsRefusedAndNothingChanges() throws IOException {
    RemountOutcome o = remounter(4 * MIB, 8 * MIB, Duration.ZERO).grow(watched(), 512 * 1024L, "test");

    assertThat(o.result()).isEqualTo(RemountOutcome.Result.REFUSED);
    assertThat(o.detail()).contains("only grows");
    assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=1024k");
  }

  @Test
  void theCapHoldsWhateverIsAsked() throws IOException {
    RemountOutcome o = remounter(4 * MIB, 8 * MIB, Duration.ZERO).grow(watched(), 64 * MIB, "test");

    assertThat(o.result()).isEqualTo(RemountOutcome.Result.GROWN);
    assertThat(o.detail()).contains("capped");
    assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=8192k");
  }

  @Test
  void aSecondGrowWithinTheCooldownIsRefused() throws IOException {
    Remounter r = remounter(4 * MIB, 64 * MIB, Duration.ofHours(1));
    assertThat(r.grow(watched(), null, "first").result()).isEqualTo(RemountOutcome.Result.GROWN);

    RemountOutcome second = r.grow(watched(), 16 * MIB, "second");

    assertThat(second.result()).isEqualTo(RemountOutcome.Result.REFUSED);
    assertThat(second.detail()).contains("remount.cooldown is 1h");
    assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=4096k");
  }

  @Test
  void aNewTmpfsWithTheDeviceNumberAndMountIdOfARemovedOneDoesNotInheritItsCooldown() throws IOException {
    Remounter r = remounter(4 * MIB, 64 * MIB, Duration.ofHours(1));
    ShmMount first = watched();
    assertThat(r.grow(first, null, "first").result()).isEqualTo(RemountOutcome.Result.GROWN);

    // The kernel gives a new tmpfs the lowest free device minor and mount id: mounted again at once, it
    // usually gets the removed one's both, as a container started after another stopped does.
    ShmMount second = null;
    for (int i = 0; i < 20 && second == null; i++) {
      Cmd.run("umount", shm.path().toString());
      Cmd.run("mount", "-t", "tmpfs", "-o", OPTIONS, "shmguard-test", shm.path().toString());
      ShmMount again = watched();
      second = again.dev().equals(first.dev()) && again.mountId() == first.mountId() ? again : null;
    }
    Assumptions.assumeTrue(second != null, "the kernel gave no new tmpfs the removed one's device and mount id");
    long unique;
    try (MountHandle h = MountReach.open(second)) {
      unique = h.uniqueMountId();
    }

    RemountOutcome o = r.grow(second, null, "second");

    if (unique != 0) {
      assertThat(o.result()).as("a new tmpfs (unique mount id " + unique + "): " + o.detail())
          .isEqualTo(RemountOutcome.Result.GROWN);
      assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=4096k");
    } else {
      // Before Linux 6.8, as docs/remount.md says: only the device number and mount id tell mounts apart.
      assertThat(o.result()).as(o.detail()).isEqualTo(RemountOutcome.Result.REFUSED);
    }
  }

  @Test
  void nothingIsRemountedWhenRemountIsOff() throws IOException {
    Remounter off = new Remounter(new RemountPolicy(false, SizeSpec.ofBytes(4 * MIB), SizeSpec.ofBytes(8 * MIB), Duration.ZERO),
        1L << 34, Clock.systemUTC());

    RemountOutcome o = off.onCritical(watched());

    assertThat(o.result()).isEqualTo(RemountOutcome.Result.REFUSED);
    assertThat(o.detail()).contains("remount.enabled: false");
  }

  @Test
  void aTmpfsOnlyInAContainersNamespaceGrowsThroughItsOwnRoot() throws IOException {
    try (Holder c = Holder.startInContainer("size=1m,mode=1770,nr_inodes=500,nosuid,nodev", "create-map:4096", "/dev/shm/nccl-Cnt001")) {
      Path cfg = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n");
      ShmMount m = Engine.create(TestConfig.load(cfg), HostPaths.system()).judge().snapshot().mounts().stream()
          .filter(x -> x.origin() == MountOrigin.NAMESPACE && x.pids().contains(c.pid())).findFirst().orElseThrow();
      assertThat(m.path()).startsWith("/proc/");

      MountEntry before = mountinfo(Path.of("/proc/" + c.pid() + "/mountinfo"), "/dev/shm");

      RemountOutcome o = remounter(4 * MIB, 8 * MIB, Duration.ZERO).grow(m, null, "test");

      assertThat(o.result()).as(o.detail()).isEqualTo(RemountOutcome.Result.GROWN);
      MountEntry e = mountinfo(Path.of("/proc/" + c.pid() + "/mountinfo"), "/dev/shm");
      assertThat(Remounter.changedBesidesSize(before, e)).isNull();
      assertThat(e.superOptions().split(",")).contains("size=4096k", "mode=1770", "nr_inodes=500");
      assertThat(e.mountOptions().split(",")).contains("nosuid", "nodev");
      // the sandbox's own /dev/shm is another tmpfs and stays as it was
      assertThat(mountinfo(Path.of("/proc/self/mountinfo"), "/dev/shm").superOptions()).contains("size=65536k");
    }
  }

  @Test
  void aChangeBesidesTheSizeIsNamed() {
    MountEntry before = MountEntry.parse("40 30 0:50 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=1024k,mode=1777");
    MountEntry grown = MountEntry.parse("40 30 0:50 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=4096k,mode=1777");
    MountEntry madeRo = MountEntry.parse("40 30 0:50 / /dev/shm ro,nosuid,nodev - tmpfs shm ro,size=4096k,mode=1777");
    MountEntry modeChanged = MountEntry.parse("40 30 0:50 / /dev/shm rw,nosuid,nodev - tmpfs shm rw,size=4096k,mode=755");

    assertThat(Remounter.changedBesidesSize(before, grown)).isNull();
    assertThat(Remounter.changedBesidesSize(before, madeRo)).contains("mount options changed from rw,nosuid,nodev to ro,nosuid,nodev");
    assertThat(Remounter.changedBesidesSize(before, modeChanged)).contains("mode=1777").contains("mode=755");
    assertThat(Remounter.changedBesidesSize(before, null)).contains("gone");
  }

  @Test
  void aMountThatWasNeverVerifiedIsNotRemounted() throws IOException {
    ShmMount found = watched();
    ShmMount unverified = new ShmMount(found.dev(), found.path(), found.mountPoint(), found.origin(), found.options(),
        found.namespace(), found.pids(), found.container(), found.usage());

    RemountOutcome o = remounter(4 * MIB, 8 * MIB, Duration.ZERO).grow(unverified, null, "test");

    assertThat(o.result()).isEqualTo(RemountOutcome.Result.FAILED);
    assertThat(o.detail()).contains("never verified");
    assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=1024k");
  }

  @Test
  void aPathCoveredByAnotherMountAfterDiscoveryIsNotRemountedAndNeitherMountChanges() throws IOException {
    ShmMount found = watched();
    try (TmpfsMount cover = TmpfsMount.createAt(shm.path(), "size=2m")) {
      RemountOutcome o = remounter(4 * MIB, 8 * MIB, Duration.ZERO).grow(found, null, "test");

      assertThat(o.result()).isEqualTo(RemountOutcome.Result.FAILED);
      assertThat(o.detail()).contains("no longer leads to the root of mount " + found.mountId());
      assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=2048k");
    }
    assertThat(mountinfo(Path.of("/proc/self/mountinfo"), shm.path().toString()).superOptions()).contains("size=1024k");
  }

  private Remounter remounter(long target, long max, Duration cooldown) {
    return new Remounter(new RemountPolicy(true, SizeSpec.ofBytes(target), SizeSpec.ofBytes(max), cooldown),
        1L << 34, Clock.systemUTC());
  }

  private ShmMount watched() {
    return Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "2m")), HostPaths.system()).judge().snapshot().mounts().get(0);
  }

  private static MountEntry mountinfo(Path file, String mountPoint) throws IOException {
    MountEntry last = null;
    for (MountEntry e : MountEntry.parseAll(Files.readString(file))) {
      if (e.mountPoint().equals(mountPoint)) {
        last = e;
      }
    }
    assertThat(last).as("a mount at " + mountPoint + " in " + file).isNotNull();
    return last;
  }
}
