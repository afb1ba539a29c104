package org.shmguard.it.daemon;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.alert.EventKind;
import org.shmguard.daemon.Daemon;
import org.shmguard.host.HostPaths;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A benchmark, not a test: the delay from a holder's SIGKILL to the reap of the segment it
 * leaves, over many kills. Prints median, p99 and max; asserts nothing about speed. Run it with
 * {@code mvn test -Dtest=ReapDelayBenchmark -Dshmguard.bench=true}; {@code -Dshmguard.bench.kills=N} sets
 * the number of kills (50), {@code -Dshmguard.bench.background=N} starts N idle processes first.
 */
class ReapDelayBenchmark {
  private static final Duration PATIENCE = Duration.ofSeconds(60);

  @Test
  void holderKillToReap() throws Exception {
    assumeTrue(Boolean.getBoolean("shmguard.bench"), "a benchmark: run with -Dshmguard.bench=true");
    Sandbox.require();
    int kills = Integer.getInteger("shmguard.bench.kills", 50);
    // Idle processes that hold nothing: every /proc pass reads them too, as on a busy host.
    int background = Integer.getInteger("shmguard.bench.background", 0);
    List<Process> idle = new ArrayList<>();
    for (int i = 0; i < background; i++) {
      idle.add(new ProcessBuilder("sleep", "3600").start());
    }
    RecordingSink sink = new RecordingSink();
    List<Double> ms = new ArrayList<>();
    List<Double> passMs = new ArrayList<>();
    try (TmpfsMount shm = TmpfsMount.create("size=64m,mode=1777");
        Daemon daemon = Daemon.start(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system(), sink,
            ServiceNotifier.none())) {
      for (int i = 0; i < kills; i++) {
        String name = String.format("nccl-B%05d", i);
        Path seg = shm.file(name);
        // A rank: creates the segment, writes to it, keeps the descriptor (sleep inherits fd 3).
        Process rank = new ProcessBuilder("sh", "-c", "exec 3<>\"$0\"; printf x >&3; exec sleep 1000", seg.toString()).start();
        Eventually.until("the holder watched", PATIENCE, () -> daemon.status().watchedHolders() == 1);
        long killedAt = System.nanoTime();
        rank.destroyForcibly();
        RecordingSink.Received r = sink.awaitSegment(EventKind.SEGMENT_REAPED, name, PATIENCE);
        ms.add((r.nanoTime() - killedAt) / 1e6);
        passMs.add(daemon.status().lastPassNanos() / 1e6);
        rank.waitFor(10, TimeUnit.SECONDS);
        Eventually.until("the holder forgotten", PATIENCE, () -> daemon.status().watchedHolders() == 0);
      }
    }
    for (Process p : idle) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    Collections.sort(ms);
    Collections.sort(passMs);
    System.out.printf("the pass that reaped (observe + judge + confirming pass + unlink): median %.1f ms%n",
        passMs.get(passMs.size() / 2));
    System.out.printf("SIGKILL of the holder -> segment reaped, %d kills, %d idle processes: median %.1f ms, p99 %.1f ms, max %.1f ms%n",
        ms.size(), background, ms.get(ms.size() / 2), ms.get((int) Math.ceil(ms.size() * 0.99) - 1), ms.get(ms.size() - 1));
  }
}
