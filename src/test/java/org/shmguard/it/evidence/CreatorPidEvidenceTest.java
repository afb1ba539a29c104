package org.shmguard.it.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * The creator pid in a PyTorch or SGLang name, read against the real /proc pass: while the
 * process with that pid runs, an unheld file past its grace is only reported; once it has exited,
 * the file is reaped with no configuration.
 */
class CreatorPidEvidenceTest {

  @Test
  void anUnheldFileIsReapedOnceTheCreatorItsNameGivesHasExited() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=4m")) {
      Process creator = new ProcessBuilder("sleep", "600").start();
      try {
        Path torch = shm.createSegment("torch_" + creator.pid() + "_3735928559_0", 65_536);
        Path sglang = shm.createSegment("sgl_shm_mq_" + creator.pid() + "_0badf00d", 65_536);
        Engine engine = Engine.create(TestConfig.load(TestConfig.write("mounts: [" + shm.path() + "]\n"
            + "reap:\n  requireHostPidNamespace: false\nfamilies:\n  pytorch:\n    grace: 10s\n  sglang:\n    grace: 10s\n")),
            HostPaths.system());
        Thread.sleep(11_000); // past the least grace a handed-on family may have

        PassReport alive = engine.clean(false);
        assertThat(alive.judgement().segments()).hasSize(2).allSatisfy(a -> {
          assertThat(a.verdict()).isEqualTo(Verdict.LEAKED);
          assertThat(a.reason()).contains("kept: its creator, pid " + creator.pid() + " (from its name), is alive: pid "
              + creator.pid() + " can reach this mount and started before the file was made");
        });
        assertThat(alive.outcomes()).isEmpty();
        assertThat(Files.exists(torch) && Files.exists(sglang)).isTrue();

        creator.destroyForcibly();
        assertThat(creator.waitFor(20, TimeUnit.SECONDS)).isTrue();
        PassReport dead = engine.clean(false);
        assertThat(dead.judgement().segments()).extracting(Assessment::reason)
            .allSatisfy(r -> assertThat(r).contains("its creator, pid " + creator.pid() + " (from its name), has exited"));
        assertThat(dead.outcomes()).hasSize(2).allSatisfy(o ->
            assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.REAPED));
        assertThat(Files.exists(torch) || Files.exists(sglang)).isFalse();
      } finally {
        creator.destroyForcibly().waitFor(20, TimeUnit.SECONDS);
      }
    }
  }
}
