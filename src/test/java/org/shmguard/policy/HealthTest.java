package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Glob;

/** The health verdict of {@code shmguard check} on snapshots the kernel tests cannot easily make. */
class HealthTest {
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);

  private static Snapshot snapshot(ShmMount.Usage usage, List<String> problems, boolean hostPidNamespace) {
    ShmMount m = new ShmMount(Dev.of(0, 50), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", "mnt:[1]", List.of(), null, usage);
    return new Snapshot(Instant.EPOCH, List.of(m), List.of(), HolderIndex.empty(), new BitSet(), Map.of(), problems, List.of(),
        hostPidNamespace, 10);
  }

  @Test
  void incompleteProcPassIsAProblemEvenOnAnEmptyMount() {
    Snapshot s = snapshot(new ShmMount.Usage(1 << 20, 0, 1 << 20, 100, 100), List.of("cannot read /proc/42/maps: permission denied"), true);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.PROBLEM);
    assertThat(h.line()).isEqualTo("incomplete /proc pass: cannot read /proc/42/maps: permission denied");
    assertThat(h.status().exitCode()).isEqualTo(1);
  }

  @Test
  void mountThatCannotBeMeasuredIsUnknown() {
    Health h = Health.of(Judge.judge(snapshot(null, List.of(), true), HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.UNKNOWN);
    assertThat(h.status().exitCode()).isEqualTo(2);
    assertThat(h.line()).isEqualTo("unknown: cannot measure /dev/shm");
  }

  @Test
  void fillExactlyAtTheThresholdIsCritical() {
    Snapshot s = snapshot(new ShmMount.Usage(100 << 20, 90 << 20, 10 << 20, 100, 90), List.of(), true);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 90, false);

    assertThat(h.status()).isEqualTo(Health.Status.PROBLEM);
    assertThat(h.line()).isEqualTo("/dev/shm 90% full (critical 90%)");
  }

  /** A report-only mount of uid 65534's own namespace, as discovery makes one. */
  private static ShmMount usersOwn(ShmMount.Usage usage) {
    return new ShmMount(Dev.of(0, 77), "/proc/109/root/dev/shm", "/dev/shm", MountOrigin.NAMESPACE, "rw", "mnt:[2]",
        List.of(109), null, usage, 31, "/proc/109/mountinfo", "its mount namespace is owned by user namespace 9 of uid 65534",
        65534L);
  }

  private static Snapshot withUsersOwn(ShmMount.Usage users) {
    Snapshot host = snapshot(new ShmMount.Usage(100 << 20, 10 << 20, 90 << 20, 100, 90), List.of(), true);
    return new Snapshot(Instant.EPOCH, List.of(host.mounts().get(0), usersOwn(users)), List.of(), HolderIndex.empty(),
        new BitSet(), Map.of(), List.of(), List.of(), true, 10);
  }

  @Test
  void aFullMountThatIsItsOwnersIsNamedAsTheirsAndLeavesTheNodeHealthy() {
    Snapshot s = withUsersOwn(new ShmMount.Usage(1 << 20, 1 << 20, 0, 100, 98));

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 95, true);

    assertThat(h.status()).isEqualTo(Health.Status.OK);
    assertThat(h.problems()).isEmpty();
    assertThat(h.owners()).containsOnlyKeys(Health.Problem.FULL);
    assertThat(h.line()).isEqualTo("ok: 1 mount, fullest /dev/shm 10% (critical 95%), 0 leaked; "
        + "not the node's: uid 65534's /proc/109/root/dev/shm 100% full (critical 95%)");
  }

  @Test
  void anOwnersMountThatCannotBeMeasuredLeavesTheVerdictKnown() {
    Health h = Health.of(Judge.judge(withUsersOwn(null), HolderHistory.empty(), POLICY), 95, false);

    assertThat(h.status()).isEqualTo(Health.Status.OK);
    assertThat(h.line()).startsWith("ok: 1 mount, fullest /dev/shm");
  }

  @Test
  void onlyAnOwnersMountIsNoMountOfTheNodes() {
    Snapshot s = new Snapshot(Instant.EPOCH, List.of(usersOwn(new ShmMount.Usage(1 << 20, 1 << 20, 0, 100, 98))), List.of(),
        HolderIndex.empty(), new BitSet(), Map.of(), List.of(), List.of(), true, 10);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 95, false);

    assertThat(h.status()).isEqualTo(Health.Status.OK);
    assertThat(h.line()).startsWith("ok: no shm tmpfs of the node's to watch; not the node's: uid 65534's ");
  }

  @Test
  void aThousandFullMountsOfTheirOwnersAreNamedThreeAndCounted() {
    List<ShmMount> mounts = new java.util.ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      ShmMount m = usersOwn(new ShmMount.Usage(1 << 20, 1 << 20, 0, 100, 98));
      mounts.add(new ShmMount(Dev.of(0, 1000 + i), "/proc/" + (2000 + i) + "/root/dev/shm", m.mountPoint(), m.origin(),
          m.options(), "mnt:[" + i + "]", List.of(2000 + i), null, m.usage(), 31, m.mountinfo(), m.reportOnly(), 65534L));
    }
    Snapshot s = new Snapshot(Instant.EPOCH, mounts, List.of(), HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 10);

    Health h = Health.of(Judge.judge(s, HolderHistory.empty(), POLICY), 95, false);

    assertThat(h.status()).isEqualTo(Health.Status.OK);
    assertThat(h.owners().get(Health.Problem.FULL)).endsWith("; and 997 more").hasSizeLessThan(300);
    assertThat(h.line()).hasSizeLessThan(400);
  }

  @Test
  void aMessageMustBeOneLine() {
    assertThatThrownBy(() -> new Health(Health.Status.OK, "two\nlines")).isInstanceOf(IllegalArgumentException.class);
    assertThat(Health.unknown("a\nb").line()).isEqualTo("unknown: a b");
  }
}
