package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Action;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.ReapPlan;
import org.shmguard.testing.RecordingSink;

/** The daemon's act stage: each planned action reaches the one part that carries it out. */
class ActsTest {
  private static final ShmMount MOUNT = new ShmMount(Dev.of(0, 25), "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null,
      List.of(), null, null);
  private static final Judgement JUDGEMENT = new Judgement(new Snapshot(Instant.EPOCH, List.of(MOUNT), List.of(),
      HolderIndex.empty(), new BitSet(), Map.of(), List.of(), List.of(), true, 0), List.of(), List.of(),
      new ReapPlan(List.of(), List.of()));

  @Test
  void alertsGoToTheSinkAndAdviceToTheAdviceService() {
    RecordingSink sink = new RecordingSink();
    List<Judgement> advised = new ArrayList<>();
    Acts acts = new Acts(sink, advised::add, null);

    acts.carry(new Action.Raise(Alert.of(EventKind.CAPACITY_WARNING, "/dev/shm is 81% full")));
    acts.carry(new Action.Advise(JUDGEMENT));

    assertThat(sink.all()).extracting(Alert::kind).containsExactly(EventKind.CAPACITY_WARNING);
    assertThat(advised).containsExactly(JUDGEMENT);
  }

  @Test
  void aDaemonWithoutAdviceOrRemounterRaisesAlertsAndChangesNothingElse() {
    RecordingSink sink = new RecordingSink();
    Acts acts = Acts.alertsOnly(sink);

    acts.carry(new Action.Advise(JUDGEMENT));
    acts.carry(new Action.Remount(MOUNT, "it passed the critical threshold"));

    assertThat(sink.all()).isEmpty();
  }
}
