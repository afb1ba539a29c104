package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountContents;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.testing.RecordingSink;

/** too_many_files: once when a mount's root passes reap.examineLimit, again only after it fell back. */
class FileCountAlertsTest {
  private static final Dev DEV = Dev.of(0, 77);
  private static final ShmMount MOUNT = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(),
      null, null);

  private static Snapshot withFiles(long files, long matching, int examined) {
    return new Snapshot(Instant.EPOCH, List.of(MOUNT), List.of(), HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 0, List.of(new MountContents(DEV, files, 0, 0, matching, 0, examined, 10_000)));
  }

  @Test
  void aMountOverTheLimitIsReportedOnceUntilItFallsBackUnder() {
    FileCountAlerts alerts = new FileCountAlerts();
    RecordingSink sink = new RecordingSink();

    alerts.report(withFiles(9_000, 10, 10), sink::emit);
    assertThat(sink.all()).isEmpty();

    alerts.report(withFiles(1_000_000, 20_000, 10_000), sink::emit);
    alerts.report(withFiles(990_000, 10_000, 10_000), sink::emit);
    alerts.report(withFiles(980_000, 0, 0), sink::emit);
    assertThat(sink.all()).singleElement().satisfies(a -> {
      assertThat(a.kind()).isEqualTo(EventKind.TOO_MANY_FILES);
      assertThat(a.field("SHM_FILES")).isEqualTo("1000000");
      assertThat(a.field("SHM_MATCHING")).isEqualTo("20000");
      assertThat(a.field("SHM_UNEXAMINED")).isEqualTo("10000");
      assertThat(a.field("SHM_LIMIT")).isEqualTo("10000");
      assertThat(a.field("SHM_MOUNT")).isEqualTo("/dev/shm");
    });

    alerts.report(withFiles(10_000, 0, 0), sink::emit); // back to the limit: re-armed
    alerts.report(withFiles(10_001, 0, 0), sink::emit);
    assertThat(sink.all()).hasSize(2);
  }
}
