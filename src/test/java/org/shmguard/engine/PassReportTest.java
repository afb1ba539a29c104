package org.shmguard.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;

class PassReportTest {
  @Test
  void aReportBetweenPassesCarriesItsAlertsAndNoJudgement() {
    Alert a = Alert.of(EventKind.SUMMARY, "summary: /dev/shm is 3% full (ok)");

    PassReport r = PassReport.of(a);

    assertThat(r.isPass()).isFalse();
    assertThat(r.judgement()).isNull();
    assertThat(r.alerts()).containsExactly(a);
    assertThat(r.outcomes()).isEmpty();
  }

  @Test
  void aPassReportHasBothItsJudgementAndItsPlanOrNeither() {
    assertThatThrownBy(() -> new PassReport(Fixtures.JUDGEMENT, null, List.of(), List.of(), List.of(), false, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("judgement and its plan");
    assertThat(new PassReport(Fixtures.JUDGEMENT, Fixtures.EMPTY_PLAN, List.of(), List.of(), List.of(), false,
        Duration.ZERO).isPass()).isTrue();
  }

  @Test
  void itsListsDoNotChangeWithWhatTheyWereMadeFrom() {
    List<Alert> alerts = new ArrayList<>(List.of(Alert.of(EventKind.MOUNT_ADDED, "watching /dev/shm")));
    PassReport r = PassReport.between(List.of(), alerts);

    alerts.clear();

    assertThat(r.alerts()).hasSize(1);
    assertThatThrownBy(() -> r.alerts().clear()).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void theExitPathsReportSaysItsKindAndCarriesItsReapsAndTheirEvents() {
    var leak = new org.shmguard.policy.Assessment(new org.shmguard.model.Segment(org.shmguard.model.Dev.of(0, 25),
        "nccl-Exit01".getBytes(java.nio.charset.StandardCharsets.UTF_8), 7, 4100, 8192, 0100600, 1000, 1, 0, 0), null,
        org.shmguard.policy.Verdict.LEAKED, "unheld; every process that held it has exited", "nccl", List.of(),
        Duration.ofSeconds(21), List.of());
    var reaped = new org.shmguard.remedy.ReapOutcome(leak, org.shmguard.remedy.ReapOutcome.Result.REAPED, "unlinked");
    Alert event = org.shmguard.policy.OutcomeAlerts.reaped(reaped);

    PassReport r = PassReport.exitPass(List.of(reaped), List.of(event), Duration.ofMillis(3));

    assertThat(r.kind()).isEqualTo(PassReport.Kind.EXIT);
    assertThat(r.isPass()).isFalse();
    assertThat(r.outcomes()).containsExactly(reaped);
    assertThat(event.kind()).isEqualTo(EventKind.SEGMENT_REAPED);
    assertThat(event.field("SHM_AGE_SECONDS")).isEqualTo("21");
    assertThat(PassReport.of(event).kind()).isEqualTo(PassReport.Kind.BETWEEN);
    assertThat(new PassReport(Fixtures.JUDGEMENT, Fixtures.EMPTY_PLAN, List.of(), List.of(), List.of(), false,
        Duration.ZERO).kind()).isEqualTo(PassReport.Kind.FULL);
    assertThatThrownBy(() -> PassReport.exitPass(List.of(), List.of(), Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
