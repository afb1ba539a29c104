package org.shmguard.it.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.shmguard.host.SegmentLister;
import org.shmguard.model.MountContents;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.testing.TmpfsMount;
import org.shmguard.text.Glob;

/** A listing keeps at most its limit, the oldest files a pattern allows, and counts everything else. */
class SegmentListerTest {
  private static final ReapPolicy POLICY = new ReapPolicy(java.time.Duration.ofMinutes(2), List.of(Glob.of("nccl-*")),
      List.of(Glob.of("nccl-deny*")), true);

  @Test
  void keepsTheOldestMatchingFilesUpToTheLimitAndCountsTheRest() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      for (int i = 0; i < 5; i++) {
        shm.createSegment("nccl-Old" + i, 4096);
        Thread.sleep(20); // each a clock tick or more older than the next
      }
      shm.createSegment("python-file", 8192);
      shm.createSegment("nccl-deny-me", 4096);
      Files.createDirectory(shm.file("nccl-dir"));
      Files.createSymbolicLink(shm.file("nccl-link"), shm.file("nccl-Old0"));
      ShmMount mount = new ShmMount(shm.dev(), shm.path().toString(), shm.path().toString(), MountOrigin.CONFIGURED,
          "rw", null, List.of(), null, null);

      SegmentLister.Listing l = new SegmentLister(new SegmentLister.Selection(POLICY::examines, 2)).list(mount);

      assertThat(l.problem()).isNull();
      assertThat(l.segments()).extracting(Segment::displayName).containsExactly("nccl-Old0", "nccl-Old1");
      MountContents c = l.contents();
      assertThat(c.files()).isEqualTo(7);
      assertThat(c.fileBytes()).isEqualTo(5 * 4096 + 8192 + 4096);
      assertThat(c.otherEntries()).isEqualTo(2); // the directory and the link
      assertThat(c.matching()).isEqualTo(5); // the denied name is counted as not matching
      assertThat(c.matchingBytes()).isEqualTo(5 * 4096);
      assertThat(c.examined()).isEqualTo(2);
      assertThat(c.unexamined()).isEqualTo(3);
      assertThat(c.entries()).isEqualTo(9);
    }
  }

  @Test
  void removingTheOldestLetsTheNextPassExamineTheNext() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      for (int i = 0; i < 3; i++) {
        shm.createSegment("nccl-Seq" + i, 4096);
        Thread.sleep(20);
      }
      ShmMount mount = new ShmMount(shm.dev(), shm.path().toString(), shm.path().toString(), MountOrigin.CONFIGURED,
          "rw", null, List.of(), null, null);
      SegmentLister lister = new SegmentLister(new SegmentLister.Selection(POLICY::examines, 1));
      assertThat(lister.list(mount).segments()).extracting(Segment::displayName).containsExactly("nccl-Seq0");
      Files.delete(shm.file("nccl-Seq0"));
      assertThat(lister.list(mount).segments()).extracting(Segment::displayName).containsExactly("nccl-Seq1");
    }
  }

  @Test
  void heldAndHardLinkedFilesDoNotCrowdOutANewerLeak() throws Exception {
    try (TmpfsMount shm = TmpfsMount.create("size=1m")) {
      shm.createSegment("nccl-Link0", 4096);
      Files.createLink(shm.file("nccl-Link1"), shm.file("nccl-Link0"));
      Files.createLink(shm.file("nccl-Link2"), shm.file("nccl-Link0"));
      shm.createSegment("nccl-HeldA", 4096);
      long heldIno = (Long) Files.getAttribute(shm.file("nccl-HeldA"), "unix:ino");
      Thread.sleep(20);
      shm.createSegment("nccl-Leak", 4096);
      ShmMount mount = new ShmMount(shm.dev(), shm.path().toString(), shm.path().toString(), MountOrigin.CONFIGURED,
          "rw", null, List.of(), null, null);

      SegmentLister.Listing l = new SegmentLister(new SegmentLister.Selection(POLICY::examines, 1))
          .list(mount, key -> key.ino() == heldIno);

      assertThat(l.segments()).extracting(Segment::displayName).contains("nccl-Leak").hasSize(2);
      assertThat(l.contents().matching()).isEqualTo(5);
      assertThat(l.contents().examined()).isEqualTo(2);
      assertThat(l.contents().unexamined()).isEqualTo(3);
    }
  }
}
