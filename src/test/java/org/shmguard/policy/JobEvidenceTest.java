package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Access;
import org.shmguard.model.CreatorCandidates;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.Use;

/** Whose evidence counts, as docs/safety.md's table says: each row once, without a kernel. */
class JobEvidenceTest {
  private static final Segment ALICES = new Segment(Dev.of(0, 25), "nccl-x".getBytes(StandardCharsets.UTF_8), 11, 4096,
      4096, 0100600, 1000, 1, 0, 0);
  private static final ProcessInfo ALICE = new ProcessInfo(100, "python3", 1000, "alice", null, 5_000);
  private static final ProcessInfo NOBODY = new ProcessInfo(75, "python3", 65534, "nobody", null, 7_500);
  private static final ProcessInfo ROOT = new ProcessInfo(1, "backup", 0, "root", null, 1);
  private static final ProcessInfo UNREAD = new ProcessInfo(77, "?", -1, null, null, -1);

  private static HolderRef ref(ProcessInfo p, Access access, Use use) {
    return new HolderRef(p.pid(), access, "/dev/shm/nccl-x", false, 4096, use);
  }

  @Test
  void aLookupNeverCountsWhoeverMadeIt() {
    assertThat(JobEvidence.holderCounts(ref(NOBODY, Access.FD, Use.LOOKUP), NOBODY, ALICES)).isFalse();
    assertThat(JobEvidence.holderCounts(ref(ALICE, Access.FD, Use.LOOKUP), ALICE, ALICES)).isFalse();
    assertThat(JobEvidence.whyNot(ref(NOBODY, Access.FD, Use.LOOKUP), NOBODY, ALICES)).contains("only looked it up (O_PATH)");
  }

  @Test
  void theOwnersReadersAndAnyonesWritersCount() {
    assertThat(JobEvidence.holderCounts(ref(ALICE, Access.FD, Use.READ), ALICE, ALICES)).isTrue();
    assertThat(JobEvidence.holderCounts(ref(ALICE, Access.MAP, Use.UNKNOWN), ALICE, ALICES)).isTrue();
    assertThat(JobEvidence.holderCounts(ref(NOBODY, Access.MAP, Use.WRITE), NOBODY, ALICES)).isTrue();
    assertThat(JobEvidence.holderCounts(ref(UNREAD, Access.FD, Use.WRITE), UNREAD, ALICES)).isTrue();
  }

  @Test
  void anotherUidsReaderCountsForNothingRootsIncluded() {
    assertThat(JobEvidence.holderCounts(ref(NOBODY, Access.FD, Use.READ), NOBODY, ALICES)).isFalse();
    assertThat(JobEvidence.holderCounts(ref(NOBODY, Access.MAP, Use.READ), NOBODY, ALICES)).isFalse();
    assertThat(JobEvidence.holderCounts(ref(ROOT, Access.FD, Use.READ), ROOT, ALICES)).isFalse();
    assertThat(JobEvidence.holderCounts(ref(UNREAD, Access.FD, Use.READ), UNREAD, ALICES)).as("owner unknown").isFalse();
    assertThat(JobEvidence.holderCounts(ref(UNREAD, Access.FD, Use.READ), null, ALICES)).isFalse();
    assertThat(JobEvidence.whyNot(ref(NOBODY, Access.FD, Use.READ), NOBODY, ALICES))
        .isEqualTo("75 python3 (nobody) is not its owner (uid 1000) and could only read it");
  }

  @Test
  void aCreatorCandidateMustRunAsTheFilesOwnerUnderOneOfItsUids() {
    assertThat(JobEvidence.mayHaveMade(candidate(Set.of(65534)), ALICES)).isFalse();
    assertThat(JobEvidence.mayHaveMade(candidate(Set.of(0, 1000)), ALICES)).as("setuid: saved or fs uid").isTrue();
    assertThat(JobEvidence.mayHaveMade(candidate(null), ALICES)).as("not read: may be it").isTrue();
  }

  private static CreatorCandidates.Candidate candidate(Set<Integer> uids) {
    return new CreatorCandidates.Candidate(4242, 4026531836L, true, 100, 1, null, null, uids);
  }
}
