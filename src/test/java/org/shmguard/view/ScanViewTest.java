package org.shmguard.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** {@code scan --json}'s shape, from a real judgement: each file with its verdict, and the grace* note only without history. */
class ScanViewTest {
  @Test
  void aFileInItsGraceIsListedWithItsVerdictAndTheNoHistoryNoteOnlyForALocalScan() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-View1", 64 << 10);
      Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system()).judge();

      ScanView local = ScanView.of(j);
      ScanView daemons = ScanView.of(j, true);

      assertThat(local.takenAt()).isEqualTo(j.snapshot().takenAt().toString());
      assertThat(local.mounts()).hasSize(1);
      assertThat(local.segments()).singleElement().satisfies(s -> assertThat(s.toString()).contains("nccl-View1", "grace"));
      assertThat(local.notes()).contains(ScanView.NO_HISTORY);
      assertThat(daemons.notes()).doesNotContain(ScanView.NO_HISTORY);
      assertThat(seg).exists();
    }
  }
}
