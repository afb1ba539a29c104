package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.ExamineBudget;
import org.shmguard.host.HostPaths;
import org.shmguard.host.Observer;
import org.shmguard.host.SegmentLister;
import org.shmguard.model.Dev;
import org.shmguard.model.MountContents;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.text.Glob;

/**
 * reap.examineTotal bounds the files a pass keeps over all mounts: the host's and configured
 * mounts take their shares first, root's containers share what is left evenly, a mount that needs
 * less leaves more for the others, and mounts shmguard only reports take nothing.
 */
class ExamineBudgetTest {
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);

  @Test
  void theHostsMountTakesItsShareBeforeContainersWhichShareTheRestEvenly() {
    ShmMount host = mount(1, MountOrigin.HOST, null);
    List<ShmMount> containers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      containers.add(mount(10 + i, MountOrigin.NAMESPACE, null));
    }
    List<ShmMount> found = new ArrayList<>(containers); // discovery order does not decide
    found.add(1, host);
    ExamineBudget budget = new ExamineBudget(found, 100, 300);

    assertThat(budget.listed().get(0)).isSameAs(host);
    List<Integer> shares = new ArrayList<>();
    for (ShmMount m : budget.listed()) {
      ExamineBudget.Share share = budget.shareOf(m);
      shares.add(share.oldest());
      budget.used(share.oldest(), share.apart()); // each uses all it gets
    }
    assertThat(shares).containsExactly(100, 50, 50, 50, 50);
  }

  @Test
  void theHostsMountLeavesHalfToRootsContainersWhateverItHolds() {
    ShmMount host = mount(1, MountOrigin.HOST, null);
    ShmMount container = mount(10, MountOrigin.NAMESPACE, null);
    ExamineBudget budget = new ExamineBudget(List.of(host, container), 100, 100);

    assertThat(budget.shareOf(host)).isEqualTo(new ExamineBudget.Share(50, 50));
    budget.used(50, 50);
    assertThat(budget.shareOf(container)).isEqualTo(new ExamineBudget.Share(50, 50));
    assertThat(new ExamineBudget(List.of(host), 100, 100).shareOf(host)).as("alone, all of it")
        .isEqualTo(new ExamineBudget.Share(100, 100));
  }

  @Test
  void filesSetApartInOneMountTakeNoPlaceFromLeaksInAnother() {
    ShmMount host = mount(1, MountOrigin.HOST, null);
    ShmMount other = mount(2, MountOrigin.CONFIGURED, null);
    ExamineBudget budget = new ExamineBudget(List.of(host, other), 100, 100);

    assertThat(budget.shareOf(host)).isEqualTo(new ExamineBudget.Share(50, 50));
    budget.used(0, 50); // nothing but hard links and held files
    assertThat(budget.shareOf(other)).isEqualTo(new ExamineBudget.Share(100, 50));
  }

  @Test
  void aMountThatNeedsLessLeavesMoreForTheMountsAfterIt() {
    List<ShmMount> found = List.of(mount(10, MountOrigin.NAMESPACE, null), mount(11, MountOrigin.NAMESPACE, null),
        mount(12, MountOrigin.NAMESPACE, null));
    ExamineBudget budget = new ExamineBudget(found, 100, 120);

    assertThat(budget.shareOf(found.get(0)).oldest()).isEqualTo(40);
    budget.used(4, 0);
    assertThat(budget.shareOf(found.get(1)).oldest()).isEqualTo(58);
    budget.skipped(); // not answering: its share stays
    assertThat(budget.shareOf(found.get(2)).oldest()).isEqualTo(100); // 116 left, the per-mount limit caps it
  }

  @Test
  void thousandsOfContainersNeverKeepMoreThanTheTotalAndTheFirstStillGetOne() {
    List<ShmMount> found = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      found.add(mount(100 + i, MountOrigin.NAMESPACE, null));
    }
    ExamineBudget budget = new ExamineBudget(found, 10, 1000);
    long sum = 0;
    for (ShmMount m : budget.listed()) {
      ExamineBudget.Share share = budget.shareOf(m);
      sum += share.oldest() + share.apart();
      budget.used(share.oldest(), share.apart());
    }
    assertThat(sum).isEqualTo(2000); // 1000 of each set
  }

  @Test
  void mountsShmguardOnlyReportsAreNeverListed() {
    ShmMount users = mount(20, MountOrigin.NAMESPACE, "its mount namespace is owned by user namespace 4026532000");
    ShmMount host = mount(1, MountOrigin.HOST, null);

    assertThat(new ExamineBudget(List.of(users, host), 10, 10).listed()).containsExactly(host);
  }

  @Test
  void aPassOverRealMountsKeepsNoMoreThanTheTotalAndCountsWhatWaits() throws Exception {
    Sandbox.require();
    try (TmpfsMount small = TmpfsMount.create("size=1m");
        TmpfsMount a = TmpfsMount.create("size=1m");
        TmpfsMount b = TmpfsMount.create("size=1m")) {
      for (int i = 0; i < 2; i++) {
        small.createSegment("nccl-Small" + i, 0);
      }
      for (int i = 0; i < 40; i++) {
        a.createSegment("nccl-A" + i, 0);
        b.createSegment("nccl-B" + i, 0);
      }
      Observer observer = new Observer(HostPaths.system(), false,
          List.of(small.path().toString(), a.path().toString(), b.path().toString()), false, Clock.systemUTC(),
          new SegmentLister.Selection(POLICY::examines, 20), 30, 0);

      Snapshot snap = observer.observe();

      assertThat(snap.segments()).hasSize(30);
      assertThat(snap.contents(small.dev()).examined()).isEqualTo(2); // a share of 10; it needs 2
      MountContents ca = snap.contents(a.dev());
      MountContents cb = snap.contents(b.dev());
      assertThat(ca.examined()).isEqualTo(14); // 28 left for two mounts
      assertThat(cb.examined()).isEqualTo(14);
      assertThat(ca.unexamined() + cb.unexamined()).isEqualTo(52);
      assertThat(snap.coverage().kept()).isEqualTo(30);
      assertThat(snap.notExamined()).contains("52 files with reapable names beyond this pass's share")
          .contains("reap.examineTotal 30");
    }
  }

  private static ShmMount mount(int minor, MountOrigin origin, String reportOnly) {
    return new ShmMount(Dev.of(0, minor), "/m" + minor, "/dev/shm", origin, "rw", null, List.of(), null, null, 7, null,
        reportOnly, reportOnly == null ? 0L : 65534L);
  }
}
