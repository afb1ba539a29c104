package org.shmguard.daemon;

import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.mockito.ArgumentMatchers;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.PassReport;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.Snapshot;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Plan;
import org.shmguard.policy.ReapPlan;
import org.shmguard.systemd.ServiceNotifier;

/** systemd's STATUS= follows each pass once READY=1 was sent, and nothing between passes. */
class StatusOutputTest {
  private static final Judgement QUIET = new Judgement(new Snapshot(Instant.EPOCH, List.of(), List.of(),
      HolderIndex.empty(), new BitSet(), Map.of(), List.of(), List.of(), true, 0), List.of(), List.of(),
      new ReapPlan(List.of(), List.of()));
  private static final PassReport PASS = new PassReport(QUIET, new Plan(List.of(), null), List.of(), List.of(), List.of(),
      false, Duration.ofMillis(2));

  @Test
  void aPassAfterReadyUpdatesTheStatusLine() {
    ServiceNotifier notifier = mock(ServiceNotifier.class);

    new StatusOutput(notifier, () -> true, () -> "1 mount, 0 segments").export(PASS);

    verify(notifier).status("1 mount, 0 segments");
  }

  @Test
  void beforeReadyAndBetweenPassesTheStatusLineIsLeftAlone() {
    ServiceNotifier notifier = mock(ServiceNotifier.class);
    AtomicBoolean ready = new AtomicBoolean(false);
    StatusOutput status = new StatusOutput(notifier, ready::get, () -> "starting");

    status.export(PASS);
    ready.set(true);
    status.export(PassReport.of(Alert.of(EventKind.SUMMARY, "summary")));

    verify(notifier, never()).status(ArgumentMatchers.anyString());
  }
}
