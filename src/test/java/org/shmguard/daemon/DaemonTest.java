package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.config.Config;
import org.shmguard.engine.AlertOutput;
import org.shmguard.engine.Outputs;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** The daemon, made then begun: nothing runs before begin, and one never begun closes at once. */
class DaemonTest {
  @Test
  void aDaemonMadeButNeverBegunRunsNoPassAndClosesAtOnce() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "1h"));
      RecordingSink sink = new RecordingSink();
      Daemon daemon = Daemon.create(config, HostPaths.system(), new Outputs("test").add(new AlertOutput(sink)),
          ServiceNotifier.none(), null, PassThread.DEADLINE, HolderState.NONE);

      long started = System.nanoTime();
      daemon.close();

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      assertThat(daemon.ready()).isFalse();
      assertThat(daemon.status().passes()).isZero();
      assertThat(sink.all()).isEmpty();
    }
  }

  @Test
  void aBegunDaemonIsReadyAfterItsFirstPassAndSaysSoInItsStatusLine() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Config config = TestConfig.load(TestConfig.watching(shm.path(), "1h"));
      RecordingSink sink = new RecordingSink();
      try (Daemon daemon = Daemon.start(config, HostPaths.system(), sink, ServiceNotifier.none())) {
        daemon.passNow().get(60, TimeUnit.SECONDS);

        assertThat(daemon.ready()).isTrue();
        assertThat(daemon.statusLine()).startsWith("1 mount, 0 segments, 0 leaked, 0 reaped since start");
        assertThat(sink.of(EventKind.MOUNT_ADDED)).hasSize(1);
      }
    }
  }
}
