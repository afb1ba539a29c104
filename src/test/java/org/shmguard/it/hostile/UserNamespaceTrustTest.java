package org.shmguard.it.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.host.MountEntry;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Linux;
import org.shmguard.policy.RemountPolicy;
import org.shmguard.text.SizeSpec;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.remedy.Remounter;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Holder;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.testing.UserNsAttacker;

/**
 * What an ordinary user (uid 65534, with user namespaces of their own) can make shmguard do to
 * mounts, and that real containers still work. The sandbox's /dev/shm plays the host's.
 */
class UserNamespaceTrustTest {
  private static final long MIB = 1L << 20;

  // ---- (1) a chroot whose "/dev/shm" is the attacker's own small tmpfs ----

  @Test
  void aUserNamespaceWithAChrootIsOnlyReportedAndNeitherTheHostsNorItsOwnTmpfsIsRemountedOrReaped() throws Exception {
    MountEntry hostBefore = hostShm();
    long hostSizeBefore = sizeOf("/dev/shm");
    try (UserNsAttacker a = UserNsAttacker.chroot("size=1m,mode=1777,noexec")) {
      MountEntry atkBefore = a.shm();
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");

      ShmMount m = namespaceMountOf(config, a.pid());
      assertThat(m.mayAct()).isFalse();
      assertThat(m.reportOnly()).contains("user namespace");
      RemountOutcome o = remounter().onCritical(m);
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      assertThat(o.result()).isEqualTo(RemountOutcome.Result.REFUSED);
      assertThat(o.detail()).contains("only reports");
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(a.file("nccl-Atk001")).exists();
      assertThat(hostShm()).isEqualTo(hostBefore);
      assertThat(sizeOf("/dev/shm")).isEqualTo(hostSizeBefore);
      assertThat(a.shm()).isEqualTo(atkBefore);
    }
  }

  @Test
  void optedInAUserNamespaceIsRemountedThroughItsOwnRootSoTheHostsTmpfsIsUntouched() throws Exception {
    MountEntry hostBefore = hostShm();
    long hostSizeBefore = sizeOf("/dev/shm");
    try (UserNsAttacker a = UserNsAttacker.chroot("size=1m,mode=1777,noexec")) {
      MountEntry atkBefore = a.shm();
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  requireHostPidNamespace: false\n"
          + "namespaces:\n  actInUserNamespaces: true\n");
      ShmMount m = namespaceMountOf(config, a.pid());
      assertThat(m.mayAct()).as(m.reportOnly()).isTrue();

      RemountOutcome o = remounter().onCritical(m);

      assertThat(o.result()).as(o.detail()).isEqualTo(RemountOutcome.Result.GROWN);
      assertThat(hostShm()).isEqualTo(hostBefore);
      assertThat(sizeOf("/dev/shm")).isEqualTo(hostSizeBefore);
      MountEntry atkAfter = a.shm();
      assertThat(atkAfter.superOptions()).contains("size=4096k");
      assertSameExceptSize(atkBefore, atkAfter);
    }
  }

  // ---- (2) a bind of a sub-directory of somebody else's tmpfs at the attacker's /dev/shm ----

  @Test
  void aBindOfAnotherTmpfsDirectoryNeverLetsShmguardReapInThatTmpfsEvenOptedIn() throws Exception {
    try (TmpfsMount victim = TmpfsMount.create("size=4m,mode=1777")) {
      Path victimFile = victim.createSegment("nccl-Victim1", 4100);
      Files.writeString(victimFile, "the victim's data", StandardCharsets.UTF_8);
      Files.setPosixFilePermissions(victimFile, PosixFilePermissions.fromString("rw-------"));
      Cmd.run("chown", "1000:1000", victimFile.toString());
      Path sub = Files.createDirectory(victim.path().resolve("sub"));
      Files.setPosixFilePermissions(sub, PosixFilePermissions.fromString("rwxrwxrwx"));
      try (UserNsAttacker a = UserNsAttacker.bindAtDevShm(sub)) {
        assertThat(a.shm().root()).isEqualTo("/sub");
        for (String extra : List.of("", "namespaces:\n  actInUserNamespaces: true\n")) {
          Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n" + extra);

          ShmMount m = namespaceMountOf(config, a.pid());
          CliRun clean = CliRun.of("clean", "-c", config.toString());

          assertThat(m.mayAct()).isFalse();
          assertThat(m.reportOnly()).contains("directory /sub");
          assertThat(m.path()).startsWith("/proc/");
          assertThat(clean.status()).as(clean.err()).isZero();
          assertThat(Files.readString(victimFile)).isEqualTo("the victim's data");
          assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(victimFile))).isEqualTo("rw-------");
          assertThat(Cmd.run("stat", "-c", "%u:%g", victimFile.toString()).strip()).isEqualTo("1000:1000");
          assertThat(sub.resolve("nccl-Atk001")).exists();
        }
      }
    }
  }

  @Test
  void aUserNamespaceThatShowsRootsConfiguredTmpfsCannotStopReapingThere() throws Exception {
    try (TmpfsMount configured = TmpfsMount.create("size=4m,mode=1777");
        UserNsAttacker a = UserNsAttacker.bindAtDevShm(configured.path())) {
      Path leaked = configured.createSegment("nccl-RootLeak", 4100);
      Path config = TestConfig.write("mounts: [auto, " + configured.path() + "]\nreap:\n  grace: 0s\n"
          + "  requireHostPidNamespace: false\n");

      JsonNode scan = CliRun.scanJson(config);
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      JsonNode m = null;
      for (JsonNode x : scan.get("mounts")) {
        if (x.get("dev").asText().equals(configured.dev().toString())) {
          m = x;
        }
      }
      assertThat(m).as("the configured mount in %s", scan.get("mounts")).isNotNull();
      assertThat(m.get("origin").asText()).isEqualTo("configured");
      assertThat(m.path("reportOnly").isMissingNode()).isTrue();
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leaked).doesNotExist();
    }
  }

  // ---- (3) a container root made: still reaped in, and remounted with only its size changed ----

  @Test
  void aContainerRootMadeIsStillReapedInAndGrownWithOnlyItsSizeChanged() throws Exception {
    try (Holder c = Holder.startInContainer("size=1m,mode=1770,uid=65534,gid=65534,nr_inodes=500,nosuid,nodev,noexec",
        "create-map:4096", "/dev/shm/nccl-Held01")) {
      Path shm = Path.of("/proc", Integer.toString(c.pid()), "root", "dev", "shm");
      Path leaked = shm.resolve("nccl-Leak01");
      Files.write(leaked, new byte[4100]);
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");
      Path mountinfo = Path.of("/proc", Integer.toString(c.pid()), "mountinfo");
      MountEntry before = visibleAt(mountinfo, "/dev/shm");
      ShmMount m = namespaceMountOf(config, c.pid());
      assertThat(m.mayAct()).as(m.reportOnly()).isTrue();

      CliRun clean = CliRun.of("clean", "-c", config.toString());
      RemountOutcome o = remounter().onCritical(m);

      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leaked).doesNotExist();
      assertThat(shm.resolve("nccl-Held01")).exists();
      assertThat(o.result()).as(o.detail()).isEqualTo(RemountOutcome.Result.GROWN);
      MountEntry after = visibleAt(mountinfo, "/dev/shm");
      assertThat(after.mountId()).isEqualTo(before.mountId());
      assertThat(after.superOptions()).contains("size=4096k");
      assertSameExceptSize(before, after);
      assertThat(sizeOf(shm.toString())).isEqualTo(4 * MIB);
    }
  }

  // ---- (4) a container whose /dev/shm is a bind of the host's ----

  @Test
  void aContainerThatBindsTheHostsDevShmStillHasItsLeaksReaped() throws Exception {
    Path leaked = Path.of("/dev/shm/nccl-HostBind1");
    Files.write(leaked, new byte[4100]);
    Process container = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "sh", "-c",
        "mount --bind /dev/shm /dev/shm && echo ready && exec sleep 600").redirectErrorStream(true).start();
    try (Holder holder = Holder.start("create-map:4096", "/dev/shm/nccl-HostBindHeld")) {
      assertThat(new String(container.getInputStream().readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("ready\n");
      Path config = TestConfig.write("mounts: [auto]\nreap:\n  grace: 0s\n  requireHostPidNamespace: false\n");
      String hostDev = Cmd.run("stat", "-c", "%Hd:%Ld", "/dev/shm").strip();

      JsonNode scan = CliRun.scanJson(config);
      CliRun clean = CliRun.of("clean", "-c", config.toString());

      List<JsonNode> same = new ArrayList<>();
      scan.get("mounts").forEach(x -> {
        if (x.get("dev").asText().equals(hostDev)) {
          same.add(x);
        }
      });
      assertThat(same).hasSize(1);
      assertThat(same.get(0).get("origin").asText()).isEqualTo("host");
      assertThat(same.get(0).path("reportOnly").isMissingNode() || same.get(0).get("reportOnly").isNull()).isTrue();
      assertThat(clean.status()).as(clean.err()).isZero();
      assertThat(leaked).doesNotExist();
      assertThat(Path.of("/dev/shm/nccl-HostBindHeld")).exists();
    } finally {
      container.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      Files.deleteIfExists(leaked);
      Files.deleteIfExists(Path.of("/dev/shm/nccl-HostBindHeld"));
    }
  }

  // ---- helpers ----

  private static ShmMount namespaceMountOf(Path config, int pid) {
    return Engine.create(TestConfig.load(config), HostPaths.system()).judge().snapshot().mounts().stream()
        .filter(x -> x.origin() == MountOrigin.NAMESPACE && x.pids().contains(pid)).findFirst()
        .orElseThrow(() -> new AssertionError("no mount found through pid " + pid));
  }

  private static Remounter remounter() {
    return new Remounter(new RemountPolicy(true, SizeSpec.ofBytes(4 * MIB), SizeSpec.ofBytes(8 * MIB), Duration.ZERO),
        1L << 34, Clock.systemUTC());
  }

  private static MountEntry hostShm() throws IOException {
    return visibleAt(Path.of("/proc/self/mountinfo"), "/dev/shm");
  }

  private static long sizeOf(String path) {
    try {
      return Linux.get().statvfs(path).sizeBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void assertSameExceptSize(MountEntry before, MountEntry after) {
    assertThat(after.mountOptions()).isEqualTo(before.mountOptions());
    assertThat(withoutSize(after.superOptions())).isEqualTo(withoutSize(before.superOptions()));
    assertThat(after.dev()).isEqualTo(before.dev());
    assertThat(after.root()).isEqualTo(before.root());
  }

  private static List<String> withoutSize(String superOptions) {
    return Arrays.stream(superOptions.split(",")).filter(w -> !w.startsWith("size=")).toList();
  }

  static MountEntry visibleAt(Path mountinfo, String mountPoint) throws IOException {
    MountEntry last = null;
    for (MountEntry e : MountEntry.parseAll(Files.readString(mountinfo))) {
      if (e.mountPoint().equals(mountPoint)) {
        last = e;
      }
    }
    assertThat(last).as("a mount at %s in %s", mountPoint, mountinfo).isNotNull();
    return last;
  }
}
