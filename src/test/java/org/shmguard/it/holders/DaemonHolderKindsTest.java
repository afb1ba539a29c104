package org.shmguard.it.holders;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.shmguard.daemon.Daemon;
import org.shmguard.alert.EventKind;
import org.shmguard.engine.Engine;
import org.shmguard.engine.PassReport;
import org.shmguard.host.HostPaths;
import org.shmguard.model.HolderRef;
import org.shmguard.policy.Assessment;
import org.shmguard.policy.Verdict;
import org.shmguard.remedy.ReapOutcome;
import org.shmguard.systemd.ServiceNotifier;
import org.shmguard.testing.Eventually;
import org.shmguard.testing.RecordingSink;
import org.shmguard.testing.Sandbox;
import org.shmguard.testing.TestConfig;
import org.shmguard.testing.ThreadHolder;
import org.shmguard.testing.TmpfsMount;

/**
 * Every holder kind that /proc shows only partly or not at all, against the running daemon (in
 * this JVM) on a real tmpfs: a clone() thread with its own fd table (fd or mapping), an fd in
 * flight over SCM_RIGHTS, a file registered in an io_uring, a file bind-mounted into another mount
 * namespace, and a holder that hands its fd over SCM_RIGHTS and exits. With a grace of 0s every pass would reap an unheld file: while the holder
 * lives, several passes leave it, and the holder's fd still shows one link; once nothing holds
 * it, the daemon reaps it. ThreadHoldersTest and LeaseReapTest do the same with `clean`.
 */
class DaemonHolderKindsTest {
  private static final Duration PATIENCE = Duration.ofSeconds(60);
  private static final int PASSES = 3;
  private final RecordingSink sink = new RecordingSink();
  private TmpfsMount shm;
  private Daemon daemon;

  @AfterEach
  void stop() {
    if (daemon != null) {
      daemon.close();
    }
    if (shm != null) {
      shm.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"clone-fd", "clone-map"})
  void threadWithItsOwnFdTableKeepsItsSegmentUntilItExits(String mode) throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Path seg = shm.createSegment("nccl-DClone", 9_637_892);
    try (ThreadHolder holder = ThreadHolder.start(mode, seg)) { // held before the daemon, whose grace is 0s, sees it
      startDaemonOn(shm, "0s");
      for (int i = 0; i < PASSES; i++) {
        PassReport p = pass();
        Assessment a = assessed(p, "nccl-DClone");
        assertThat(a.verdict()).as(a.reason()).isEqualTo(Verdict.HELD);
        assertThat(a.holders()).extracting(HolderRef::pid).containsOnly(holder.pid());
        assertNotReaped(p, seg, "nccl-DClone");
        assertThat(holder.nlink()).isEqualTo(1);
      }
      Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
    }
    // No sweep from here: the holder's exit alone makes the daemon reap what it left.
    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-DClone", PATIENCE);
    assertThat(seg).doesNotExist();
  }

  @Test
  void fdInFlightInAUnixSocketSurvivesPassesAndTheReceiverGetsItWhole() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Path seg = shm.createSegment("nccl-DScm01", 9_637_892);
    try (HiddenHolder receiver = HiddenHolder.start("scm", seg.toString())) { // the sender has closed and exited
      startDaemonOn(shm, "0s");
      for (int i = 0; i < PASSES; i++) {
        ReapOutcome o = outcome(pass(), "nccl-DScm01");
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("in flight");
        assertThat(seg).exists();
      }

      receiver.say("recv");
      assertThat(receiver.readLine()).isEqualTo("nlink 1");
      assertHeldAndWatched("nccl-DScm01", receiver.pid());
    }
    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-DScm01", PATIENCE);
    assertThat(seg).doesNotExist();
  }

  @Test
  void fileRegisteredInAnIoUringSurvivesPassesUntilUnregistered() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Path seg = shm.createSegment("nccl-DUring", 4_100);
    try (HiddenHolder ring = HiddenHolder.start("uring", seg.toString())) {
      startDaemonOn(shm, "0s");
      for (int i = 0; i < PASSES; i++) {
        ReapOutcome o = outcome(pass(), "nccl-DUring");
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("io_uring");
        assertThat(seg).exists();
      }

      ring.say("unregister");
      assertThat(ring.readLine()).isEqualTo("unregistered");
      // The ring drops its reference asynchronously, and nothing exits to wake the daemon: sweep until it is gone.
      Eventually.until("the daemon reaps the unregistered file", PATIENCE, () -> {
        pass();
        return !Files.exists(seg);
      });
      assertThat(sink.of(EventKind.SEGMENT_REAPED)).extracting(a -> a.field("SHM_SEGMENT")).containsExactly("nccl-DUring");
    }
  }

  /** A file mounted into another mount namespace (a container's -v /dev/shm/F:/x): the mount holds it, opening nothing. */
  @Test
  void fileBindMountedIntoAnotherMountNamespaceSurvivesPassesUntilTheMountGoes() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Path seg = shm.createSegment("nccl-DBind1", 4_100);
    Path target = Files.createTempFile(Sandbox.MOUNTS, "bind-target", "");
    try (HiddenHolder container = HiddenHolder.start("bind", seg.toString(), target.toString())) {
      startDaemonOn(shm, "0s");
      for (int i = 0; i < PASSES; i++) {
        ReapOutcome o = outcome(pass(), "nccl-DBind1");
        assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.SKIPPED);
        assertThat(o.detail()).contains("mounted elsewhere").contains(target.toString());
        assertThat(seg).exists();
      }
      container.say("nlink");
      assertThat(container.readLine()).isEqualTo("nlink 1");
    } finally {
      Files.deleteIfExists(target);
    }
    Eventually.until("the daemon reaps the file once the mount has gone", PATIENCE, () -> {
      pass();
      return !Files.exists(seg);
    });
  }

  /**
   * The fast path: the daemon saw one process hold the file (the grace is an hour), and that
   * process hands its fd over SCM_RIGHTS and exits. "Every process that held it has exited" is
   * true of /proc, but the fd is in flight: the lease refuses, the file stays.
   */
  @Test
  void holderThatHandsItsFdOverAndExitsDoesNotLetTheFastPathReap() throws Exception {
    shm = TmpfsMount.create("size=64m,mode=1777");
    Path seg = shm.createSegment("nccl-DHand1", 9_637_892);
    try (HiddenHolder receiver = HiddenHolder.start("handoff", seg.toString())) { // a child of it holds the fd
      startDaemonOn(shm, "1h");
      Assessment seen = assessed(pass(), "nccl-DHand1");
      assertThat(seen.verdict()).as(seen.reason()).isEqualTo(Verdict.HELD);
      assertThat(seen.holders()).isNotEmpty().extracting(HolderRef::pid).doesNotContain(receiver.pid());
      Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
      long passes = daemon.status().passes();

      receiver.say("send");
      assertThat(receiver.readLine()).isEqualTo("sent");
      // The holder's exit wakes the daemon, which judges the file left by every holder: a reap it must not do.
      Eventually.until("the daemon's pass after the holder's exit", PATIENCE, () -> daemon.status().passes() > passes);
      PassReport after = pass();
      Assessment a = assessed(after, "nccl-DHand1");
      assertThat(a.reason()).contains("every process that held it has exited");
      ReapOutcome o = outcome(after, "nccl-DHand1");
      assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.SKIPPED);
      assertThat(o.detail()).contains("in flight");
      for (int i = 0; i < PASSES; i++) {
        assertNotReaped(pass(), seg, "nccl-DHand1");
      }

      receiver.say("recv");
      assertThat(receiver.readLine()).isEqualTo("nlink 1");
      assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
      assertHeldAndWatched("nccl-DHand1", receiver.pid());
    }
    sink.awaitSegment(EventKind.SEGMENT_REAPED, "nccl-DHand1", PATIENCE);
    assertThat(seg).doesNotExist();
  }

  private void startDaemonOn(TmpfsMount mount, String grace) throws Exception {
    daemon = Daemon.start(TestConfig.load(TestConfig.watching(mount.path(), grace)), HostPaths.system(), sink,
        ServiceNotifier.none());
    Eventually.until("the first pass", PATIENCE, () -> daemon.status().passes() > 0);
  }

  /** One full daemon pass, reaping included, asked for now. */
  private PassReport pass() {
    try {
      return daemon.passNow().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for a pass", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new AssertionError("no daemon pass: " + e, e);
    }
  }

  /** A pass sees {@code pid} hold the file, and the daemon then watches that holder's exit. */
  private void assertHeldAndWatched(String name, int pid) throws Exception {
    Assessment a = assessed(pass(), name);
    assertThat(a.verdict()).as(a.reason()).isEqualTo(Verdict.HELD);
    assertThat(a.holders()).extracting(HolderRef::pid).containsOnly(pid);
    Eventually.until("the daemon watches the holder's exit", PATIENCE, () -> daemon.status().watchedHolders() == 1);
  }

  private void assertNotReaped(PassReport p, Path seg, String name) {
    assertThat(p.outcomes()).filteredOn(o -> o.candidate().segment().displayName().equals(name))
        .allSatisfy(o -> assertThat(o.result()).as(o.detail()).isEqualTo(ReapOutcome.Result.SKIPPED));
    assertThat(seg).exists();
    assertThat(sink.of(EventKind.SEGMENT_REAPED)).isEmpty();
  }

  private static Assessment assessed(PassReport p, String name) {
    List<Assessment> found = p.judgement().segments().stream()
        .filter(a -> a.segment().displayName().equals(name)).toList();
    assertThat(found).as("%s among the segments judged", name).hasSize(1);
    return found.get(0);
  }

  private static ReapOutcome outcome(PassReport p, String name) {
    List<ReapOutcome> found = p.outcomes().stream()
        .filter(o -> o.candidate().segment().displayName().equals(name)).toList();
    assertThat(found).as("%s among the pass's reap attempts: %s", name, p.outcomes()).hasSize(1);
    return found.get(0);
  }
}
