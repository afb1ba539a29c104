package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.alert.EventKind;
import org.shmguard.alert.LogAlertSink;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Counts;

/** The log line an alert becomes, as an operator reads it at a glance: one line, the reason once, people's sizes and plurals. */
class AlertLinesTest {

  @Test
  void theReasonIsSaidOnceAndEveryOtherFieldStaysForGrep() {
    String reason = "unheld; every process that held it has exited (pid 282)";
    Alert a = Alert.of(EventKind.SEGMENT_REAPED, "reaped /dev/shm/nccl-Ab12 (9.2M, nccl, age 4s): " + reason)
        .with("SHM_MOUNT", "/dev/shm").with("SHM_SEGMENT", "nccl-Ab12").with("SHM_BYTES", 9_637_892)
        .with("SHM_REASON", reason).with("SHM_HOLDER_PID", 282).with("SHM_HOLDER_COMM", "python3");

    String line = LogAlertSink.line(a);

    assertThat(line).isEqualTo("reaped /dev/shm/nccl-Ab12 (9.2M, nccl, age 4s): " + reason + " [SHMGUARD_EVENT=segment_reaped "
        + "SHM_MOUNT=/dev/shm SHM_SEGMENT=nccl-Ab12 SHM_BYTES=9637892 SHM_HOLDER_PID=282 SHM_HOLDER_COMM=python3]");
    assertThat(a.field("SHM_REASON")).as("journald still gets the reason as a field").isEqualTo(reason);
  }

  @Test
  void aFieldGivenOncePerHolderShowsThreeValuesAndHowManyMore() {
    Alert a = Alert.of(EventKind.SEGMENT_LEAKED, "leaked");
    for (int pid = 101; pid <= 105; pid++) {
      a = a.with("SHM_HOLDER_PID", pid).with("SHM_HOLDER_COMM", "rank" + pid);
    }

    assertThat(LogAlertSink.line(a)).isEqualTo("leaked [SHMGUARD_EVENT=segment_leaked SHM_HOLDER_PID=101,102,103,+2 "
        + "SHM_HOLDER_COMM=rank101,rank102,rank103,+2]");
    assertThat(a.journalFields().stream().filter(f -> f.getKey().equals("SHM_HOLDER_PID")).count()).isEqualTo(5);
  }

  @Test
  void aMessageIsOneLineWhateverAnErrorTextHolds() {
    Alert a = Alert.of(EventKind.REAP_FAILED, "could not reap /dev/shm/nccl-x\nsecond line\u001b[31m")
        .with("SHM_REASON", "Input/output error\nat somewhere");

    assertThat(a.message()).isEqualTo("could not reap /dev/shm/nccl-x\\nsecond line\\x1b[31m");
    assertThat(LogAlertSink.line(a)).doesNotContain("\n").contains("SHM_REASON=Input/output error\\nat somewhere");
  }

  @Test
  void countsAreSingularForOne() {
    assertThat(Counts.of(1, "segment")).isEqualTo("1 segment");
    assertThat(Counts.of(5, "file") + " in " + Counts.of(1, "mount")).isEqualTo("5 files in 1 mount");
    assertThat(Counts.of(1, "entry")).isEqualTo("1 entry");
    assertThat(Counts.of(3, "entry")).isEqualTo("3 entries");
    assertThat(Counts.of(0, "pass")).isEqualTo("0 passes");
  }

  @Test
  void systemdStatusSaysOneMountAndOneSegment() {
    Dev dev = Dev.of(0, 77);
    ShmMount m = new ShmMount(dev, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null, null);
    Snapshot snap = new Snapshot(Instant.EPOCH, List.of(m), List.of(), HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 0, List.of());
    var j = org.shmguard.policy.Judge.judge(snap, org.shmguard.policy.HolderHistory.empty(),
        new org.shmguard.policy.ReapPolicy(java.time.Duration.ofMinutes(2), List.of(), List.of(), false));

    assertThat(new DaemonStatus(1, 0, 0, 1, 0, 0, j, -1).line()).startsWith("1 mount, 0 segments, 0 leaked, 0 reaped since start");
  }
}
