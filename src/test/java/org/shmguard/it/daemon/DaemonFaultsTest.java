package org.shmguard.it.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/** Faults while the daemon runs: it keeps working or says clearly why not, and reaps nothing on doubt. */
class DaemonFaultsTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private final RecordingSink sink = new RecordingSink();
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private Daemon daemon;

  @AfterEach
  void stop() throws Exception {
    if (daemon != null) {
      daemon.close();
    }
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).close();
    }
  }

  private TmpfsMount mount(String options) {
    TmpfsMount m = TmpfsMount.create(options);
    cleanup.add(m);
    return m;
  }

  private void start(String yaml) throws IOException {
    daemon = Daemon.start(TestConfig.load(TestConfig.write(yaml)), HostPaths.system(), sink, ServiceNotifier.none());
    Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
  }

  private static String watching(String grace, Path... mounts) {
    StringBuilder sb = new StringBuilder("mounts:\n");
    for (Path m : mounts) {
      sb.append("  - ").append(m).append('\n');
    }
    return sb + "reap:\n  grace: " + grace + "\n  requireHostPidNamespace: false\ndaemon:\n  rediscover: 200ms\n";
  }

  @Test
  void watchedMountDisappearingLeavesTheOthersWatched() throws Exception {
    TmpfsMount a = mount("size=4m,mode=1777");
    TmpfsMount b = mount("size=4m,mode=1777");
    start(watching("0s", a.path(), b.path()));
    Eventually.until("two mounts watched", PATIENCE, () -> daemon.status().watchedMounts() == 2);

    b.close();
    sink.await(e -> e.kind() == EventKind.MOUNT_REMOVED && b.path().toString().equals(e.field("SHM_MOUNT")), PATIENCE);
    Files.write(a.file("nccl-After1"), new byte[] {1});

    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-After1", PATIENCE);
    assertThat(daemon.status().watchedMounts()).isEqualTo(1);
  }

  @Test
  void readOnlyRemountFailsTheReapOnceAndItSucceedsWhenWritableAgain() throws Exception {
    TmpfsMount m = mount("size=4m,mode=1777");
    Files.write(m.file("nccl-RoSeg1"), new byte[] {1});
    Cmd.run("mount", "-o", "remount,ro", m.path().toString());
    start(watching("0s", m.path()));

    RecordingSink.Received failed = sink.awaitSegment(EventKind.REAP_FAILED, "nccl-RoSeg1", PATIENCE);
    assertThat(failed.alert().field("SHM_REASON")).contains("Read-only");
    assertThat(m.file("nccl-RoSeg1")).exists();
    daemon.sweepNow();
    long passes = daemon.status().passes();
    Eventually.until("another pass", PATIENCE, () -> daemon.status().passes() > passes);
    assertThat(sink.of(EventKind.REAP_FAILED)).hasSize(1); // once per segment, not once per pass

    Cmd.run("mount", "-o", "remount,rw", m.path().toString());
    daemon.sweepNow();
    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-RoSeg1", PATIENCE);
  }

  @Test
  void processesVanishingMidPassNeverCostAHeldSegment() throws Exception {
    TmpfsMount m = mount("size=16m,mode=1777");
    Path held = m.file("nccl-Churn1");
    start(watching("0s", m.path()));
    AtomicBoolean churning = new AtomicBoolean(true);
    Thread churn = new Thread(() -> {
      // Short-lived processes, some holding the segment, come and go while passes read /proc.
      while (churning.get()) {
        try {
          Process p = new ProcessBuilder("sh", "-c", "exec 3<" + held + "; sleep 0.0$(( $$ % 5 ))").start();
          p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
          return;
        }
      }
    }, "churn");
    try (Holder rank = Holder.start("create-map:4100", held.toString())) {
      churn.start();
      for (int i = 0; i < 20; i++) {
        long passes = daemon.status().passes();
        daemon.sweepNow();
        Eventually.until("another pass", PATIENCE, () -> daemon.status().passes() > passes);
      }
      churning.set(false);
      churn.join(30_000);
      assertThat(held).exists();
      assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
    } finally {
      churning.set(false);
    }
  }

  @Test
  void brokenConfigurationStopsTheDaemonAtStartWithFileLineAndKey() {
    Path bad = TestConfig.write("capacity:\n  warn: 120\n");

    CliRun run = CliRun.of("daemon", "-c", bad.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err()).contains(bad + ":2").contains("capacity.warn").contains("from 1 to 100").doesNotContain("Exception");
  }

  @Test
  void thresholdsInTheWrongOrderStopTheDaemonAtStart() {
    Path bad = TestConfig.write("capacity:\n  warn: 90\n  critical: 80\n");

    CliRun run = CliRun.of("daemon", "-c", bad.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err()).contains("capacity.critical").contains("must be above capacity.warn");
  }

  @Test
  void badSummaryCronStopsTheDaemonAtStart() {
    Path bad = TestConfig.write("daemon:\n  summary: \"every hour\"\n");

    CliRun run = CliRun.of("daemon", "-c", bad.toString());

    assertThat(run.status()).isEqualTo(78);
    assertThat(run.err()).contains("daemon.summary").contains("not a valid cron expression");
  }
}
