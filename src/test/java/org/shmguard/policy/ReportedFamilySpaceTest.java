package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Glob;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.Judgement;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.policy.Verdict;
import org.shmguard.policy.family.FamilyRules;

/** What a clean would give back counts leaked NCCL files, not leaked files of a family that is only reported. */
class ReportedFamilySpaceTest {
  @Test
  void aLeakedFileOfAReportedFamilyIsNotReclaimable() {
    Dev dev = Dev.of(0, 50);
    Instant now = Instant.parse("2026-11-24T03:00:00Z");
    long old = now.minus(Duration.ofHours(1)).getEpochSecond() * 1_000_000_000L;
    ShmMount.Usage usage = new ShmMount.Usage(64 << 20, 30 << 20, 34 << 20, 100, 90);
    ShmMount mount = new ShmMount(dev, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null, usage);
    List<Segment> files = List.of(
        new Segment(dev, "nccl-AbC123".getBytes(StandardCharsets.UTF_8), 1, 9_637_892, 9_637_892, 0100600, 0, 1, old, old),
        new Segment(dev, "psm_1a2b3c4d".getBytes(StandardCharsets.UTF_8), 2, 1 << 20, 1 << 20, 0100600, 0, 1, old, old));
    Snapshot snap = new Snapshot(now, List.of(mount), files, HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 0);
    Judgement j = Judge.judge(snap, HolderHistory.empty(),
        new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true, FamilyRules.defaults()));

    assertThat(j.segments()).extracting(a -> a.verdict()).containsOnly(Verdict.LEAKED);
    assertThat(MountSpace.of(mount, usage, j).reclaimableBytes()).isEqualTo(9_637_892);
  }
}
