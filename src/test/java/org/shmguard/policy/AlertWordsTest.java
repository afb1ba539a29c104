package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.Alert;
import org.shmguard.model.Dev;
import org.shmguard.model.MountContents;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.ShmMount;

/** The words the capacity and file-count alerts use, as an operator reads them: holders by pid and name, sizes and counts as people write them. */
class AlertWordsTest {

  @Test
  void aHolderShmguardNeverReadIsPidNNotQuestionMarksAndUidMinusOne() {
    ProcessInfo exited = new ProcessInfo(282, "?", -1, null, null, -1);
    ProcessInfo known = new ProcessInfo(283, "python3", 1000, "alice", "pod:train-0", 5);

    assertThat(exited.describe()).isEqualTo("pid 282");
    assertThat(known.describe()).isEqualTo("283 python3 (alice, pod:train-0)");
    assertThat(CapacityAlerts.name(282, exited)).isEqualTo("pid 282");
    assertThat(CapacityAlerts.name(283, known)).isEqualTo("pid 283 (python3)");
  }


  @Test
  void tooManyFilesSaysSizesAndCountsAsPeopleDo() {
    Dev dev = Dev.of(0, 77);
    ShmMount m = new ShmMount(dev, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null, null);

    Alert a = FileCountAlerts.alert(m, new MountContents(dev, 20_001, 3L << 30, 0, 1, 4096, 1, 10_000));

    assertThat(a.message()).startsWith("/dev/shm holds 20001 entries (20001 files, 3.0G), more than reap.examineLimit (10000); "
        + "1 has a reapable name, ");
    assertThat(a.field("SHM_FILE_BYTES")).isEqualTo(Long.toString(3L << 30));
  }

}
