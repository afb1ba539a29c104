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
}
