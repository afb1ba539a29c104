package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.BitSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.Dev;

/**
 * The creator lookup against a fixture /proc: a name's pid is found in every PID namespace
 * (NSpid's last field), with its start time on the wall clock and the watched devices its mount
 * namespace shows; a process whose NSpid cannot be read makes the lookup incomplete.
 */
class CreatorLookupTest {
  private static final Dev WATCHED = Dev.of(0, 42);
  private static final Dev OTHER = Dev.of(0, 99);
  @TempDir Path root;

  private void process(int pid, long pidNs, String nspid, long startTicks, long mntNs, Dev... mounts) throws IOException {
    Path dir = Files.createDirectories(root.resolve("proc").resolve(Integer.toString(pid)));
    Files.createDirectories(dir.resolve("ns"));
    Files.createSymbolicLink(dir.resolve("ns/pid"), Path.of("pid:[" + pidNs + "]"));
    Files.createSymbolicLink(dir.resolve("ns/mnt"), Path.of("mnt:[" + mntNs + "]"));
    Files.writeString(dir.resolve("status"), "Name:\tpython3\nTgid:\t" + pid + "\n" + (nspid == null ? "" : "NSpid:\t" + nspid + "\n")
        + "Uid:\t1000\t1000\t1000\t1000\n");
    Files.writeString(dir.resolve("stat"), pid + " (python3) S" + " 0".repeat(18) + " " + startTicks + " 0 0\n");
    StringBuilder mountinfo = new StringBuilder("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
    int id = 30;
    for (Dev d : mounts) {
      mountinfo.append(id++).append(" 22 ").append(d.major()).append(':').append(d.minor())
          .append(" / /dev/shm rw,nosuid,nodev - tmpfs tmpfs rw\n");
    }
    Files.writeString(dir.resolve("mountinfo"), mountinfo.toString());
  }

  @BeforeEach
  void tree() throws IOException {
    Files.createDirectories(root.resolve("proc"));
    Files.writeString(root.resolve("proc/uptime"), "1000.00 3000.00\n");
    process(1, 100, "1", 1, 200, WATCHED);
    process(45, 100, "45", 90_000, 200, WATCHED);               // shmguard's own namespace, started at 900 s
    process(81234, 300, "81234\t45", 50_000, 201, OTHER);        // a container's pid 45, another tmpfs
    process(81235, 300, "81235\t46", 50_000, 201, OTHER);
    process(90001, 301, "90001\t7", 95_000, 202, WATCHED, OTHER);
  }

  private static BitSet live(int... pids) {
    BitSet b = new BitSet();
    for (int p : pids) {
      b.set(p);
    }
    return b;
  }

  @Test
  void aNamesPidIsFoundInEveryPidNamespaceWithItsStartAndTheWatchedMountsItsNamespaceShows() {
    long before = Instant.now().toEpochMilli();
    CreatorCandidates c = new CreatorLookup(HostPaths.of(root.toString()))
        .find(Set.of(45, 7), live(1, 45, 81234, 81235, 90001), Set.of(WATCHED));
    assertThat(c.answers(45)).isTrue();
    assertThat(c.problem()).isNull();
    assertThat(c.of(45)).extracting(CreatorCandidates.Candidate::hostPid).containsExactlyInAnyOrder(45, 81234);
    CreatorCandidates.Candidate own = c.of(45).stream().filter(CreatorCandidates.Candidate::ownNamespace).findFirst().orElseThrow();
    assertThat(own.pidNamespace()).isEqualTo(100);
    assertThat(own.startTicks()).isEqualTo(90_000);
    // booted 1000 s ago; started 900 s after boot: 100 s ago
    assertThat(own.startNanos() / 1_000_000).isCloseTo(before - 100_000, within(2_000L));
    assertThat(own.mayReach(WATCHED)).isTrue();
    CreatorCandidates.Candidate container = c.of(45).stream().filter(x -> !x.ownNamespace()).findFirst().orElseThrow();
    assertThat(container.pidNamespace()).isEqualTo(300);
    assertThat(container.mayReach(WATCHED)).as("its mount namespace shows only another tmpfs").isFalse();
    assertThat(c.of(7)).extracting(CreatorCandidates.Candidate::hostPid).containsExactly(90001);
    assertThat(c.of(46)).as("not asked").isEmpty();
    assertThat(c.answers(46)).isFalse();
  }

  @Test
  void aNamespaceThatShowsTheTmpfsOnlyUnderTheKubeletsDirectoryReachesItButNotAtDevShm() throws IOException {
    process(3045, 100, "3045", 1_000, 203);
    Files.writeString(root.resolve("proc/3045/mountinfo"), "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
        + "31 22 0:42 / /var/lib/kubelet/pods/7c81/volumes/kubernetes.io~empty-dir/dshm rw - tmpfs tmpfs rw\n");
    CreatorCandidates c = new CreatorLookup(HostPaths.of(root.toString()))
        .find(Set.of(3045, 45), live(1, 45, 3045), Set.of(WATCHED));
    CreatorCandidates.Candidate host = c.of(3045).get(0);
    assertThat(host.mayReach(WATCHED)).isTrue();
    assertThat(host.hasAtShm(WATCHED)).as("the volume is not its /dev/shm").isFalse();
    assertThat(c.of(45).get(0).hasAtShm(WATCHED)).as("pid 45 has it at /dev/shm").isTrue();
  }

  @Test
  void aPidThatNoLiveProcessHasAnywhereHasNoCandidates() {
    CreatorCandidates c = new CreatorLookup(HostPaths.of(root.toString()))
        .find(Set.of(30000), live(1, 45, 81234, 81235, 90001), Set.of(WATCHED));
    assertThat(c.answers(30000)).isTrue();
    assertThat(c.of(30000)).isEmpty();
  }

  @Test
  void aProcessInAnotherPidNamespaceWithoutNspidMakesTheLookupIncomplete() throws IOException {
    process(777, 302, null, 10, 203, WATCHED);
    CreatorCandidates c = new CreatorLookup(HostPaths.of(root.toString()))
        .find(Set.of(30000), live(1, 45, 777), Set.of(WATCHED));
    assertThat(c.answers(30000)).isFalse();
    assertThat(c.problem()).isEqualTo("cannot read which pid 777 has in its own PID namespace (NSpid in /proc/777/status)");
  }

  @Test
  void aProcessThatExitedDuringTheLookupIsSkipped() {
    CreatorCandidates c = new CreatorLookup(HostPaths.of(root.toString()))
        .find(Set.of(45), live(1, 45, 4242), Set.of(WATCHED));
    assertThat(c.answers(45)).isTrue();
    assertThat(c.of(45)).extracting(CreatorCandidates.Candidate::hostPid).containsExactly(45);
  }

  @Test
  void nspidIsReadAsTheLastPidOfItsLine() {
    byte[] status = "Name:\tx\nNSpid:\t81234\t17\t45\nNSsid:\t1\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThat(CreatorLookup.innermostPid(status, status.length)).isEqualTo(45);
    byte[] host = "Name:\tx\nNSpid:\t812\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThat(CreatorLookup.innermostPid(host, host.length)).isEqualTo(812);
    byte[] none = "Name:\tx\nPid:\t812\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThat(CreatorLookup.innermostPid(none, none.length)).isEqualTo(-2);
  }

  @Test
  void nothingIsReadWhenNoNameGivesAPid() {
    CreatorCandidates c = new CreatorLookup(HostPaths.of("/nonexistent")).find(Set.of(), live(1), Set.of(WATCHED));
    assertThat(c.asked()).isEmpty();
    assertThat(c.problem()).isNull();
  }

  @Test
  void theUidLineGivesEveryUidAProcessRunsAs() {
    byte[] status = "Name:\tpython3\nUmask:\t0022\nUid:\t1000\t0\t0\t1000\nGid:\t1000\t1000\t1000\t1000\n"
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] last = "Name:\tx\nUid:\t65534\t65534\t65534\t4294967294".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    byte[] none = "Name:\tx\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    assertThat(CreatorLookup.uids(status, status.length)).containsExactlyInAnyOrder(1000, 0);
    assertThat(CreatorLookup.uids(last, last.length)).as("the last line, unterminated").contains(65534, (int) 4294967294L);
    assertThat(CreatorLookup.uids(none, none.length)).isNull();
  }
}
