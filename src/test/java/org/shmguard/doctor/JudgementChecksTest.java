package org.shmguard.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.shmguard.doctor.HostFixture.GIB;
import static org.shmguard.doctor.HostFixture.MIB;
import static org.shmguard.doctor.HostFixture.only;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.ShmMount;

/** The checks that read the engine's judgement: leaks, failed creations, hidden usage, visibility. */
class JudgementChecksTest {
  @TempDir Path root;

  @Test
  void leakedSegmentsAreCountedWithTheirBytesAndTheOldestTime() {
    HostFixture host = new HostFixture(root);
    ShmMount shm = host.hostShm(GIB, 0);
    host.segment(shm, "nccl-Leak01", 9_637_892, 1001, Duration.ofHours(5));
    host.segment(shm, "nccl-Leak02", 33_030_532, 1001, Duration.ofHours(2));
    host.segment(shm, "nccl-Fresh1", 9_637_892, 1001, Duration.ofSeconds(10)); // grace: not leaked

    Finding f = only(new LeakCheck().run(host.context()), "leaked-segments");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.subject()).isEqualTo("/dev/shm");
    assertThat(f.summary()).isEqualTo("2 leaked segment(s) in /dev/shm hold 40.7M, the oldest unchanged since 2026-11-21T05:00:00Z (5h)");
    assertThat(f.evidence().get(1)).startsWith("nccl-Leak02  31.5M  nccl-proxy-pool (2.26-2.27)  since 2026-11-21T08:00:00Z");
    assertThat(f.fix().get(0)).startsWith("shmguard clean --dry-run");
  }

  @Test
  void zeroByteNcclFilesAreFailedCreations() {
    HostFixture host = new HostFixture(root);
    ShmMount shm = host.containerShm(95, 812, "docker:0123456789ab", 64 * MIB, 60 * MIB);
    host.segment(shm, "nccl-Zero01", 0, 1001, Duration.ofMinutes(7));

    Finding f = only(new LeakCheck().run(host.context()), "failed-creations");

    assertThat(f.summary()).contains("1 0-byte NCCL file(s) in docker:0123456789ab:/dev/shm").contains("No space left on device")
        .contains("2026-11-21T09:53:00Z");
  }

  @Test
  void leaksSeenOutsideTheHostPidNamespaceAreUnconfirmed() {
    HostFixture host = new HostFixture(root).notHostPidNamespace();
    ShmMount shm = host.hostShm(GIB, 0);
    host.segment(shm, "nccl-Leak01", 9_637_892, 1001, Duration.ofHours(5));

    Finding f = only(new LeakCheck().run(host.context()), "leaked-segments");

    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).startsWith("unconfirmed: shmguard is not in the host's PID namespace"));
    assertThat(f.fix()).anySatisfy(l -> assertThat(l).startsWith("clean will not reap here"));
  }

  @Test
  void hiddenUsageNamesTheProcessesAndJobsHoldingIt() {
    HostFixture host = new HostFixture(root);
    ShmMount shm = host.containerShm(96, 900, "docker:0123456789ab", 64 * MIB, 60 * MIB);
    host.process(901, "python3", 1001, "alice", "docker:0123456789ab")
        .process(902, "python3", 1001, "alice", "docker:0123456789ab")
        .mapsUnlinked(901, shm, "nccl-Hid001", 9_637_892)
        .mapsUnlinked(902, shm, "nccl-Hid002", 9_637_892)
        .mapsUnlinked(902, shm, "nccl-Hid003", 4_100);

    Finding f = only(new HiddenUsageCheck().run(host.context()), "hidden-usage");

    assertThat(f.severity()).as("60M of 64M used").isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("18.4M of docker:0123456789ab:/dev/shm is held by 3 unlinked segment(s)")
        .contains("docker:0123456789ab (2 processes)");
    assertThat(f.evidence()).anySatisfy(e -> assertThat(e).contains("/dev/shm/nccl-Hid001 (deleted)  held by 901 python3 (alice, docker:0123456789ab)"));
  }

  @Test
  void containerWithoutHostPidSaysWhatItCannotSeeAndWhatToDo() {
    HostFixture host = new HostFixture(root).notHostPidNamespace();
    host.hostShm(GIB, 0);

    Finding f = only(new VisibilityCheck().run(host.context()), "not-host-pid-namespace");

    assertThat(f.severity()).isEqualTo(Severity.WARNING);
    assertThat(f.summary()).contains("holders elsewhere are invisible").contains("other containers' /dev/shm is not found");
    assertThat(f.fix()).anySatisfy(l -> assertThat(l).contains("hostPID: true").contains("--host-root /host"));
    assertThat(f.evidence()).anySatisfy(l -> assertThat(l).endsWith("shmguard will not reap from here"));
  }

  @Test
  void outsideTheHostPidNamespaceWithReapingAllowedItSaysItReapsOnWhatItSees() {
    HostFixture host = new HostFixture(root).notHostPidNamespace().reapsOutsideTheHostPidNamespace();
    host.hostShm(GIB, 0);

    Finding f = only(new VisibilityCheck().run(host.context()), "not-host-pid-namespace");

    assertThat(f.evidence()).noneSatisfy(l -> assertThat(l).contains("will not reap"));
    assertThat(f.evidence()).anySatisfy(l -> assertThat(l).contains("reap.requireHostPidNamespace is false")
        .contains("reaps from here"));
  }
}
