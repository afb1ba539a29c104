package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.testing.CliRun;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * Holders that only a thread's view of /proc shows, with `clean` on a real tmpfs: a thread made by
 * clone() without CLONE_FILES that holds the only fd (or a mapping), and a process whose main
 * thread has exited while another thread holds the file. Each keeps its segment; once the holder
 * exits, the segment goes.
 */
class ThreadHoldersTest {
  private TmpfsMount shm;
  private Path config;

  @BeforeEach
  void mount() {
    shm = TmpfsMount.create("size=64m,mode=1777");
    config = TestConfig.watching(shm.path(), "0s"); // every segment is older than the grace
  }

  @AfterEach
  void unmount() {
    shm.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {"clone-fd", "clone-map"})
  void threadWithItsOwnFdTableKeepsItsSegment(String mode) {
    Path seg = shm.createSegment("nccl-Clone1", 9_637_892);
    try (ThreadHolder holder = ThreadHolder.start(mode, seg)) {
      assertKeptWhileHeld(seg, holder);
    }
    assertReapedOnceUnheld(seg);
  }

  @ParameterizedTest
  @ValueSource(strings = {"exit-main-fd", "exit-main-map"})
  void processWhoseMainThreadExitedKeepsItsSegment(String mode) {
    Path seg = shm.createSegment("nccl-NoMain", 9_637_892);
    try (ThreadHolder holder = ThreadHolder.start(mode, seg)) {
      holder.exitMainThread();
      assertKeptWhileHeld(seg, holder);
    }
    assertReapedOnceUnheld(seg);
  }

  @Test
  void unlinkedFileOpenInAThreadsOwnFdTableCountsAsHiddenWithItsSize() throws Exception {
    Path seg = shm.createSegment("nccl-Hidden", 9_637_892);
    try (ThreadHolder holder = ThreadHolder.start("clone-fd", seg)) {
      Files.delete(seg);

      JsonNode mount = CliRun.scanJson(config).get("mounts").get(0);

      assertThat(mount.get("hiddenBytes").asLong()).isEqualTo(9_637_892L);
      assertThat(mount.get("hidden").get(0).get("holders").get(0).get("pid").asInt()).isEqualTo(holder.pid());
      assertThat(holder.nlink()).isZero();
    }
  }

  private void assertKeptWhileHeld(Path seg, ThreadHolder holder) {
    CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());
    JsonNode scan = CliRun.scanJson(config);

    assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
    assertThat(clean.json().get("actions")).as(clean.out()).isEmpty();
    assertThat(seg).exists();
    assertThat(holder.nlink()).isEqualTo(1);
    JsonNode s = scan.get("segments").get(0);
    assertThat(s.get("verdict").asText()).as(s.toString()).isEqualTo("held");
    assertThat(s.get("reason").asText()).contains("held by pid " + holder.pid());
    assertThat(CliRun.holderPids(scan, seg.getFileName().toString())).containsOnly(holder.pid());
  }

  private void assertReapedOnceUnheld(Path seg) {
    CliRun clean = CliRun.of("clean", "--json", "-c", config.toString());

    assertThat(clean.status()).as(clean.out() + clean.err()).isZero();
    assertThat(clean.json().get("actions").get(0).get("result").asText()).isEqualTo("reaped");
    assertThat(seg).doesNotExist();
  }
}
