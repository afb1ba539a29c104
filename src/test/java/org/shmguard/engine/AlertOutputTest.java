package org.shmguard.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.testing.RecordingSink;

class AlertOutputTest {
  @Test
  void everyAlertOfAReportGoesToTheSinkInOrder() {
    RecordingSink sink = new RecordingSink();
    List<Alert> alerts = List.of(Alert.of(EventKind.MOUNT_ADDED, "watching /dev/shm"),
        Alert.of(EventKind.SEGMENT_REAPED, "reaped /dev/shm/nccl-x"), Alert.of(EventKind.REMOUNT_GROWN, "grew /dev/shm"));

    new AlertOutput(sink).export(new PassReport(Fixtures.JUDGEMENT, Fixtures.EMPTY_PLAN, List.of(), List.of(), alerts,
        false, Duration.ofMillis(3)));

    assertThat(sink.all()).containsExactlyElementsOf(alerts);
  }
}
