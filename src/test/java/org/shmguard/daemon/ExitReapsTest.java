package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.nativ.Pidfd;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.alert.EventKind;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Holder;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The exit path (the engine's exit pass, which ExitReaps runs in the daemon) and its safety, on real processes and a real tmpfs: a file judged held
 * by one process that has since been SIGKILLed. It reaps the file with its evidence when nothing holds it, and
 * never when something took hold of it after the judgement, whatever the kind of hold: an fd, an
 * O_PATH fd, a mapping without an fd, an fd in another mount namespace, a bind mount in another
 * mount namespace, or a second holder still alive.
 */
class ExitReapsTest {
  private static final String GRACE = "1h";
  private static final java.time.Duration PATIENCE = java.time.Duration.ofSeconds(60); // only the holders' exits can make these files leaked

  /** Judges the file held by a holder, lets {@code gain} take hold of it, kills the holder, runs the exit path. */
  private static List<ReapOutcome> judgeGainKill(TmpfsMount shm, Path seg, Gain gain) throws Exception {
    HostPaths host = HostPaths.system();
    Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), host);
    try (Holder rank = Holder.start("fd", seg.toString())) {
      Judgement j = engine.judge();
      assertThat(j.segments()).singleElement().satisfies(a -> assertThat(a.verdict()).isEqualTo(Verdict.HELD));
      try (AutoCloseable other = gain.take(seg)) {
        rank.kill();
        List<ReapOutcome> done = engine.exitPass(j, new int[] {rank.pid()}).outcomes();
        assertThat(seg).as("a file something else holds").exists();
        assertThat(Files.readAllBytes(seg)).hasSize(4100);
        return done;
      }
    }
  }

  @FunctionalInterface
  private interface Gain {
    AutoCloseable take(Path seg) throws Exception;
  }

  @Test
  void aFileWhoseOnlyHolderWasKilledIsReapedWithTheEvidence() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit01", 4100);
      HostPaths host = HostPaths.system();
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), host);
      int pid;
      Judgement j;
      try (Holder rank = Holder.start("fd", seg.toString())) {
        pid = rank.pid();
        j = engine.judge();
      }

      List<ReapOutcome> done = engine.exitPass(j, new int[] {pid}).outcomes();

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
        assertThat(o.candidate().reason()).contains("every process that held it has exited").contains(pid + " java")
            .contains("each exit seen on its pidfd");
      });
      assertThat(seg).doesNotExist();
    }
  }

  @Test
  void theDaemonReapsAKilledHoldersFileOnTheExitPathAndTellsItAtOnce() throws Exception {
    RecordingSink sink = new RecordingSink();
    try (TmpfsMount shm = TmpfsMount.create("size=16m,mode=1777")) {
      Path seg = shm.createSegment("nccl-Exit08", 4100);
      try (Holder rank = Holder.start("fd", seg.toString()); // held before the daemon starts: no event of its own
           Daemon daemon = Daemon.start(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), HostPaths.system(), sink,
               ServiceNotifier.none())) {
        Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
        daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // nothing left pending
        long killedAt = System.nanoTime();
        rank.kill();

        RecordingSink.Received reaped = sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-Exit08", PATIENCE);

        System.out.printf("exit path: SIGKILL -> reported %.1f ms%n", (reaped.nanoTime() - killedAt) / 1e6);
        assertThat(seg).doesNotExist();
        assertThat(reaped.alert().field("SHM_REASON")).contains("every process that held it has exited")
            .contains("each exit seen on its pidfd");
        // the exit path tells the reap on the pass thread; the worker counts it in the status after
        Eventually.until("the status counts the reap", PATIENCE, () -> daemon.status().reaped() == 1);
      }
    }
  }

  @Test
  void aFileOpenedByAnotherProcessAfterThePassIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit02", 4100);
      int[] late = new int[1];
      List<ReapOutcome> done = judgeGainKill(shm, seg, s -> {
        Holder h = Holder.start("fd", s.toString());
        late[0] = h.pid();
        return h;
      });

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("gained a holder").contains(Integer.toString(late[0]));
      });
    }
  }

  @Test
  void aFileAnotherProcessHoldsByAnOPathFdIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit03", 4100);
      List<ReapOutcome> done = judgeGainKill(shm, seg, s -> started("python3", "-c",
          "import os,sys; fd=os.open(sys.argv[1], os.O_PATH); print('ready', flush=True); sys.stdin.read()", s.toString()));

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("gained a holder");
      });
    }
  }

  @Test
  void aFileAnotherProcessHasOnlyMappedIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit04", 4100);
      // The exit path reads no maps: the write lease, refused while the mapping exists, keeps it.
      List<ReapOutcome> done = judgeGainKill(shm, seg, s -> Holder.start("map", s.toString()));

      assertThat(done).singleElement().satisfies(o -> assertThat(o.result()).as(o.detail())
          .isEqualTo(ReapOutcome.Result.SKIPPED));
    }
  }

  @Test
  void aFileOpenedInAnotherMountNamespaceIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit05", 4100);
      List<ReapOutcome> done = judgeGainKill(shm, seg, s -> Holder.startInContainer("size=1m", "fd", s.toString()));

      assertThat(done).singleElement().satisfies(o -> {
        assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("gained a holder");
      });
    }
  }

  @Test
  void aFileBindMountedInAnotherMountNamespaceIsNotReaped() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit06", 4100);
      Path target = Files.createTempFile(Sandbox.MOUNTS, "bind-target", "");
      try {
        List<ReapOutcome> done = judgeGainKill(shm, seg, s -> started("unshare", "--mount", "--propagation", "private",
            "/bin/sh", "-c", "mount --bind \"$1\" \"$2\" && echo ready && exec cat", "sh", s.toString(), target.toString()));

        assertThat(done).singleElement().satisfies(o -> {
          assertThat(o.result()).isEqualTo(ReapOutcome.Result.SKIPPED);
          assertThat(o.detail()).contains("mounted elsewhere");
        });
      } finally {
        Files.deleteIfExists(target);
      }
    }
  }

  @Test
  void aFileASecondHolderStillHoldsIsNotACandidate() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit07", 4100);
      HostPaths host = HostPaths.system();
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), host);
      try (Holder rank = Holder.start("fd", seg.toString()); Holder peer = Holder.start("map", seg.toString())) {
        Judgement j = engine.judge();
        rank.kill();

        assertThat(engine.exitPass(j, new int[] {rank.pid()}).outcomes()).isEmpty();
        assertThat(seg).exists();
      }
    }
  }

  @Test
  void anExitThatFiresDuringAFullPassIsReapedInsideItAndToldBeforeThePassEnds() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit09", 4100);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), HostPaths.system());
      List<PassReport> told = new java.util.concurrent.CopyOnWriteArrayList<>();
      Judgement[] last = new Judgement[1];
      ExitReaps reaps = new ExitReaps(engine, told::add, () -> last[0]);
      engine.yieldingTo(reaps::between);
      try (Holder rank = Holder.start("fd", seg.toString())) {
        last[0] = engine.judge();
        int pidfd = Pidfd.open(rank.pid());
        try {
          reaps.watching(new int[] {rank.pid()}, new int[] {pidfd});
          rank.kill();

          PassReport full = engine.pass(false, true); // its first look between mounts sees the pidfd fired

          assertThat(told).singleElement().satisfies(r -> {
            assertThat(r.kind()).isEqualTo(PassReport.Kind.EXIT);
            assertThat(r.outcomes()).singleElement().satisfies(o -> assertThat(o.candidate().reason())
                .contains("every process that held it has exited").contains("each exit seen on its pidfd"));
          });
          assertThat(full.outcomes()).as("nothing left for the full pass").isEmpty();
          assertThat(reaps.yielded()).singleElement().satisfies(y -> {
            assertThat(y.pids()).containsExactly(rank.pid());
            assertThat(y.exit().complete()).isTrue();
          });
          assertThat(seg).doesNotExist();
        } finally {
          Pidfd.close(pidfd);
        }
      }
    }
  }

  @Test
  void noExitPassStartsOnceTheDaemonStops() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Exit10", 4100);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), GRACE)), HostPaths.system());
      int pid;
      Judgement j;
      try (Holder rank = Holder.start("fd", seg.toString())) {
        pid = rank.pid();
        j = engine.judge();
      }
      ExitReaps stopped = new ExitReaps(engine, r -> { }, () -> j);

      assertThat(stopped.finish(java.time.Duration.ofSeconds(1))).isTrue();
      assertThat(stopped.run(new int[] {pid}, System.nanoTime())).isNull();
      assertThat(seg).exists();
    }
  }

  /** A process that prints "ready" once it holds what it holds, ended by pid (SIGKILL) on close. */
  private static AutoCloseable started(String... cmd) throws IOException {
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertThat(line).as(String.join(" ", cmd)).isEqualTo("ready");
    return () -> {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    };
  }
}
