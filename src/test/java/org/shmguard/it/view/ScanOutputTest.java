package org.shmguard.it.view;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.view.ScanOutput;
import org.shmguard.view.ScanSource;
import org.shmguard.view.ScanText;

/** One renderer for a local scan and the daemon's SCAN answer: the source first, then the same body. */
class ScanOutputTest {
  @Test
  void theDaemonsTextStartsWithWhereItCameFromAndALocalScansDoesNot() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system()).judge();
      ScanSource daemon = ScanSource.daemon(j, true, Duration.ofSeconds(120));

      String fromDaemon = ScanOutput.render(j, daemon, false);
      String local = ScanOutput.render(j, ScanSource.local("--local"), false);

      assertThat(fromDaemon).startsWith(daemon.line() + "\n").contains("STALE, older than 120s");
      assertThat(local).isEqualTo(ScanText.scan(j, false));
      assertThat(local).contains(shm.path().toString());
    }
  }

  @Test
  void theJsonHasItsSourceFirst() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Judgement j = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system()).judge();

      String json = ScanOutput.render(j, ScanSource.local("no daemon answers"), true);

      assertThat(json).startsWith("{\n  \"source\" : {").contains("\"why\" : \"no daemon answers\"", "\"mounts\"");
    }
  }
}
