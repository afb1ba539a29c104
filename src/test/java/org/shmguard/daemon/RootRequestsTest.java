package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.shmguard.advice.ProtocolException;
import org.shmguard.config.Config;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Outputs;
import org.shmguard.host.HostPaths;
import org.shmguard.remedy.RemountOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Root's CLEAN and REMOUNT are requests to the worker, answered from the report they came to. */
class RootRequestsTest {
  @Test
  void cleanIsAPassOfTheWorkerAnsweredFromItsReport() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Root1", 64 << 10);
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "1h"));
      RecordingSink sink = new RecordingSink();
      try (Daemon daemon = Daemon.create(config, HostPaths.system(), new Outputs("test").add(new AlertOutput(sink)),
          ServiceNotifier.none(), null, PassThread.DEADLINE, HolderState.NONE).begin()) {
        RootRequests root = daemon.rootRequests();

        assertThat(root.clean(true)).isEqualTo("would reap 0 of 0 candidates; 0 blockers");
        assertThat(root.clean(false)).isEqualTo("reaped 0 of 0 candidates; 0 blockers"); // in its grace for an hour
        assertThat(seg).exists();
        assertThatThrownBy(() -> root.remount(daemon.dryRunPass().get().judgement().mounts().get(0).mount(), null))
            .isInstanceOf(ProtocolException.class).hasMessageContaining("does not remount");
      }
    }
  }

  @Test
  void aRefusedOrFailedRemountIsAnErrorOfItsKindAndAGrownOneItsSummary() throws Exception {
    RemountOutcome grown = new RemountOutcome(RemountOutcome.Result.GROWN, "/dev/shm", 1 << 20, 2 << 20, "grow", "a", "b");
    assertThat(RootRequests.answer(grown)).isEqualTo(grown.summary());
    assertThatThrownBy(() -> RootRequests.answer(new RemountOutcome(RemountOutcome.Result.REFUSED, "/dev/shm", 0, 0,
        "remounting is off", "", ""))).isInstanceOf(ProtocolException.class)
        .satisfies(e -> assertThat(((ProtocolException) e).code()).isEqualTo(ProtocolException.REFUSED));
    assertThatThrownBy(() -> RootRequests.answer(new RemountOutcome(RemountOutcome.Result.FAILED, "/dev/shm", 0, 0,
        "EPERM", "", ""))).isInstanceOf(ProtocolException.class)
        .satisfies(e -> assertThat(((ProtocolException) e).code()).isEqualTo(ProtocolException.FAILED));
  }

  @Test
  void aRemountThatWaitedPastItsTimeIsDroppedNotCarriedOutLate() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "1h"));
      try (Daemon daemon = Daemon.create(config, HostPaths.system(), new Outputs("test"), ServiceNotifier.none(), null,
          PassThread.DEADLINE, HolderState.NONE).begin()) {
        var mount = daemon.passNow().get().judgement().mounts().get(0).mount();

        var late = daemon.worker().ask(WorkRequest.remount(mount, null, RootRequests.REMOUNT_TRIGGER, java.time.Duration.ZERO));

        assertThatThrownBy(late::get).hasMessageContaining("the request waited too long");
      }
    }
  }
}
