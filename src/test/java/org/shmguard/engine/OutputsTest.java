package org.shmguard.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.testing.RecordingSink;

/** Every output hears every report; one that fails does not silence the others. */
class OutputsTest {
  @Test
  void everyOutputIsToldEachReportInTheOrderAdded() {
    List<String> told = new ArrayList<>();
    Outputs outputs = new Outputs("test").add(r -> told.add("first")).add(r -> told.add("second"));

    outputs.export(PassReport.of(Alert.of(EventKind.SUMMARY, "summary")));

    assertThat(told).containsExactly("first", "second");
  }

  @Test
  void anOutputThatThrowsIsLoggedAndTheOthersAreStillTold() {
    RecordingSink journal = new RecordingSink();
    Outputs outputs = new Outputs("test").add(r -> {
      throw new IllegalStateException("broken output");
    }).add(new AlertOutput(journal));

    outputs.export(PassReport.of(Alert.of(EventKind.CAPACITY_WARNING, "/dev/shm is 81% full")));

    assertThat(journal.all()).extracting(Alert::kind).containsExactly(EventKind.CAPACITY_WARNING);
  }

  @Test
  void anAlertBetweenPassesReachesEveryOutputAsAReportOfItsOwn() {
    List<PassReport> told = new ArrayList<>();
    Outputs outputs = new Outputs("journald; counted in the metrics").add(told::add);
    Alert stalled = Alert.of(EventKind.MOUNT_STALLED, "/proc/42/root did not answer");

    outputs.sink().emit(stalled);

    assertThat(told).singleElement().satisfies(r -> {
      assertThat(r.isPass()).isFalse();
      assertThat(r.alerts()).containsExactly(stalled);
    });
    assertThat(outputs.sink().describe()).isEqualTo("journald; counted in the metrics");
  }
}
