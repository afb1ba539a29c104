package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.shmguard.engine.Engine;
import org.shmguard.host.HostPaths;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.Verdict;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.TmpfsMount;

/**
 * A holder killed by the OOM killer whose parent does not reap it stays a zombie in /proc. It
 * holds nothing: its segment must count as abandoned at once, not after the grace period.
 */
class ZombieHolderTest {

  @Test
  void holderLeftAsAZombieCountsAsExitedForTheFastPath() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=16m")) {
      Path seg = shm.createSegment("nccl-Zombie", 9_637_892);
      Engine engine = Engine.create(TestConfig.load(TestConfig.watching(shm.path(), "1h")), HostPaths.system());
      // The holder's parent execs sleep, which never waits for its children: a killed holder stays a
      // zombie. The holder holds until its stdin closes, so it gets the test's pipe, not the
      // /dev/null sh gives a background job.
      Path err = Files.createTempFile(Files.createDirectories(Sandbox.MOUNTS), "zombie-holder-", ".err");
      Process parent = new ProcessBuilder("sh", "-c",
          "exec 3<&0; \"$0\" -Xshare:auto -XX:TieredStopAtLevel=1 -cp \"$1\" org.shmguard.testing.HolderProcess map \"$2\" <&3 &"
              + " echo $!; exec sleep 600",
          Sandbox.javaBinary(), System.getProperty("java.class.path"), seg.toString()).redirectError(err.toFile()).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(parent.getInputStream()));
        int holder = Integer.parseInt(line(out, err).trim());
        assertThat(line(out, err)).isEqualTo("ready");
        Judgement held = engine.judge();
        assertThat(held.segments()).singleElement().extracting(a -> a.verdict()).isEqualTo(Verdict.HELD);

        ProcessHandle.of(holder).orElseThrow().destroyForcibly();
        waitForZombie(holder);

        Judgement after = engine.judge();
        assertThat(after.segments()).singleElement().satisfies(a -> {
          assertThat(a.verdict()).isEqualTo(Verdict.LEAKED);
          assertThat(a.reason()).contains("every process that held it has exited");
        });
      } finally {
        parent.descendants().forEach(ProcessHandle::destroyForcibly);
        parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        Files.deleteIfExists(err);
      }
    }
  }

  /** The harness's next line, within a minute; else the test fails with what it wrote on stderr, instead of hanging. */
  private static String line(BufferedReader out, Path err) throws Exception {
    CompletableFuture<String> next = CompletableFuture.supplyAsync(() -> {
      try {
        return out.readLine();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    try {
      String l = next.get(60, TimeUnit.SECONDS);
      if (l == null) {
        throw new AssertionError("the holder's harness ended without a line; its stderr:\n" + Files.readString(err));
      }
      return l;
    } catch (TimeoutException e) {
      throw new AssertionError("no line from the holder's harness within 60 s; its stderr:\n" + Files.readString(err));
    }
  }

  /**
   * Waits until every thread of {@code pid} has exited and only the zombie leader is left: the
   * leader of a killed JVM can be a zombie while its other threads, still exiting, keep the
   * address space (and its mappings) for a moment longer.
   */
  private static void waitForZombie(int pid) throws Exception {
    Path stat = Path.of("/proc", Integer.toString(pid), "stat");
    Path status = Path.of("/proc", Integer.toString(pid), "status");
    for (int i = 0; i < 1000; i++) {
      String s = Files.readString(stat);
      if (s.substring(s.lastIndexOf(')') + 2).startsWith("Z") && Files.readString(status).contains("\nThreads:\t1\n")) {
        return;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("pid " + pid + " did not become a zombie");
  }
}
