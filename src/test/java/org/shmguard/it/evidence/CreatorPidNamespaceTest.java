package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.PidNsCreator;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * Creators in PID namespaces of their own on a tmpfs they share with the host, as a container
 * started with {@code --ipc=host} but not {@code --pid=host} is: the pid in a PyTorch or SGLang
 * name is judged in the namespace that wrote it, against real processes and a real /proc pass.
 */
class CreatorPidNamespaceTest {
  /** A pid no process of the test's own PID namespace has: the old code read the name's pid there. */
  private static final int NS_PID = 30000;
  private static final Duration PAST_GRACE = Duration.ofSeconds(11);

  private static Engine engine(TmpfsMount shm) throws Exception {
    return Engine.create(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\n"
        + "reap:\n  requireHostPidNamespace: false\nfamilies:\n  pytorch:\n    grace: 10s\n  sglang:\n    grace: 10s\n")),
        HostPaths.system());
  }

  private static Assessment of(PassReport pass, String name) {
    return pass.judgement().segments().stream().filter(a -> a.segment().displayName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError(name + " was not judged"));
  }

  @Test
  void aLiveCreatorInItsOwnPidNamespaceKeepsItsFilesAndItsDeathLetsThemBeReaped() throws Exception {
    assertThat(ProcessHandle.of(NS_PID)).as("pid %d is free in the test's PID namespace", NS_PID).isEmpty();
    assertThat(ProcessHandle.of(NS_PID + 1)).as("pid %d is free in the test's PID namespace", NS_PID + 1).isEmpty();
    try (TmpfsMount shm = TmpfsMount.create("size=4m");
        PidNsCreator torch = PidNsCreator.start(shm.path(), NS_PID, "torch_%d_3735928559_0", "batch 7 of the live job");
        PidNsCreator sglang = PidNsCreator.start(shm.path(), NS_PID + 1, "sgl_shm_mq_%d_0badf00d", "request 12")) {
      Engine engine = engine(shm);
      Thread.sleep(PAST_GRACE.toMillis());

      PassReport alive = engine.clean(false);
      for (PidNsCreator c : new PidNsCreator[] {torch, sglang}) {
        Assessment a = of(alive, c.file().getFileName().toString());
        int pid = c == torch ? NS_PID : NS_PID + 1;
        assertThat(a.verdict()).as(a.reason()).isEqualTo(Verdict.LEAKED);
        assertThat(a.mayReap()).as(a.reason()).isFalse();
        assertThat(a.reason()).contains("kept: its creator, pid " + pid + " (from its name), is alive: pid " + pid
            + " of PID namespace ").contains("(host pid " + c.hostPid() + ") can reach this mount and started before the file was made");
      }
      assertThat(alive.outcomes()).isEmpty();
      assertThat(Files.readString(torch.file())).isEqualTo("batch 7 of the live job");
      assertThat(Files.readString(sglang.file())).isEqualTo("request 12");

      torch.close();
      PassReport dead = engine.clean(false);
      assertThat(of(dead, torch.file().getFileName().toString()).reason())
          .contains("its creator, pid " + NS_PID + " (from its name), has exited: no live process that can reach this mount has pid "
              + NS_PID + " in its own PID namespace");
      assertThat(dead.outcomes()).singleElement().satisfies(o -> {
        assertThat(o.candidate().segment().displayName()).isEqualTo(torch.file().getFileName().toString());
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
      });
      assertThat(Files.exists(torch.file())).isFalse();
      assertThat(Files.readString(sglang.file())).as("the other namespace's creator lives").isEqualTo("request 12");
    }
  }

  @Test
  void aContainerRestartedInAFreshPidNamespaceWithTheSamePidDoesNotKeepTheOldOnesFile() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Engine engine = engine(shm);
      PidNsCreator old = PidNsCreator.start(shm.path(), NS_PID, "torch_%d_3735928559_0", "the old run's batch");
      String name = old.file().getFileName().toString();
      old.close();
      Thread.sleep(1_500); // past the start-time slack: the restarted pid is provably later than the file
      try (PidNsCreator restarted = PidNsCreator.start(shm.path(), NS_PID, "torch_%d_1_0", "the new run's batch")) {
        Thread.sleep(PAST_GRACE.toMillis());
        PassReport pass = engine.clean(false);
        Assessment a = of(pass, name);
        assertThat(a.reason()).contains("its creator, pid " + NS_PID + " (from its name), has exited; that pid now belongs to a "
            + "later process or one that cannot reach this mount (PID namespace ").contains("(host pid " + restarted.hostPid()
            + ") started after the file was made)");
        assertThat(pass.outcomes()).singleElement().satisfies(o -> {
          assertThat(o.candidate().segment().displayName()).isEqualTo(name);
          assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED);
        });
        assertThat(Files.exists(shm.file(name))).isFalse();
        assertThat(Files.readString(restarted.file())).as("the restarted run's own file is kept").isEqualTo("the new run's batch");
      }
    }
  }
}
