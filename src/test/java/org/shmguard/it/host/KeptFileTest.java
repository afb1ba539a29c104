package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.shmguard.host.KeptFile;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.Sandbox;

/** A file the daemon keeps: a stalled write never holds the caller, and only the newest content is written after it. */
class KeptFileTest {
  @Test
  void aStalledWriteNeverBlocksTheCallerAndOnlyTheNewestContentFollowsIt() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "kept-");
    Path file = dir.resolve("shmguard.prom");
    CountDownLatch stalled = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger written = new AtomicInteger();
    try (KeptFile kept = KeptFile.start(file, 0644, false, "a test file")) {
      kept.replace(() -> {
        stalled.countDown();
        await(release); // as a write to a filesystem that stopped answering would
        written.incrementAndGet();
        return "first\n".getBytes(StandardCharsets.UTF_8);
      });
      assertThat(stalled.await(30, TimeUnit.SECONDS)).isTrue();

      long start = System.nanoTime();
      for (int i = 0; i < 1000; i++) {
        String text = "pass " + i + "\n";
        kept.replace(() -> {
          written.incrementAndGet();
          return text.getBytes(StandardCharsets.UTF_8);
        });
      }
      assertThat(Duration.ofNanos(System.nanoTime() - start)).as("1000 passes' writes queued without waiting")
          .isLessThan(Duration.ofSeconds(10));
      release.countDown();

      Eventually.until("the newest content is written", Duration.ofSeconds(30), () -> read(file).equals("pass 999\n"));
      Thread.sleep(200);
      assertThat(written.get()).as("the stalled write and the newest one; the rest were dropped").isEqualTo(2);
    } finally {
      Cmd.run("rm", "-rf", dir.toString());
    }
  }

  @Test
  void theSameContentIsWrittenAgainAfterAFailedWrite() throws Exception {
    Sandbox.require();
    Path dir = Files.createTempDirectory(Files.createDirectories(Sandbox.MOUNTS), "kept-");
    Path file = dir.resolve("advice.env");
    try (KeptFile kept = KeptFile.start(file, 0644, false, "a test file")) {
      Cmd.run("chmod", "0777", dir.toString()); // refused: others could write here
      kept.replace(() -> "A=1\n".getBytes(StandardCharsets.UTF_8));
      Thread.sleep(500);
      assertThat(file).doesNotExist();

      Cmd.run("chmod", "0755", dir.toString());
      kept.replace(() -> "A=1\n".getBytes(StandardCharsets.UTF_8));
      Eventually.until("written once the directory is root's alone", Duration.ofSeconds(30), () -> read(file).equals("A=1\n"));
      Object inode = Files.getAttribute(file, "unix:ino");
      kept.replace(() -> "A=1\n".getBytes(StandardCharsets.UTF_8));
      kept.replace(() -> "A=2\n".getBytes(StandardCharsets.UTF_8));
      Eventually.until("the change written", Duration.ofSeconds(30), () -> read(file).equals("A=2\n"));
      assertThat(Files.getAttribute(file, "unix:ino")).isNotEqualTo(inode);
    } finally {
      Cmd.run("rm", "-rf", dir.toString());
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (java.io.IOException e) {
      return "";
    }
  }
}
