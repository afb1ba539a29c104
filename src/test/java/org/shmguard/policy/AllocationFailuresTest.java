package org.shmguard.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.gpu.NcclFacts;
import org.shmguard.gpu.NcclVersion;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.text.Glob;

/** Every failed NCCL creation is one, whatever the free space; the free space only qualifies the message. */
class AllocationFailuresTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-21T10:00:00Z");
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2),
      List.of(Glob.of("nccl-*")), List.of(), true);
  private static final long MB = 1_000_000;

  private static Judgement judge(long freeBytes, String... names) {
    ShmMount mount = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(), null,
        new ShmMount.Usage(64 * MB, 64 * MB - freeBytes, freeBytes, 1000, 990));
    long t = NOW.minusSeconds(5).getEpochSecond() * 1_000_000_000L;
    List<Segment> segments = new java.util.ArrayList<>();
    long ino = 10;
    for (String name : names) {
      long size = name.startsWith("empty:") ? 0 : 4_100;
      segments.add(new Segment(DEV, name.replace("empty:", "").getBytes(StandardCharsets.UTF_8), ino++, size, size,
          0100600, 1000, 1, t, t));
    }
    Snapshot snap = new Snapshot(NOW, List.of(mount), segments, HolderIndex.empty(), new BitSet(), Map.of(), List.of(),
        List.of(), true, 1);
    return Judge.judge(snap, HolderHistory.empty(), POLICY);
  }

  @Test
  void failedProxyPoolOf34MbWith33MbFreeIsAFailedAllocationNamingThePool() {
    // NCCL 2.28's proxy ops pool (34,210,180 bytes) failed with 32.9 MB free: more than a receive buffer needs.
    List<AllocationFailures.Failure> found = AllocationFailures.find(judge(32_900_000, "empty:nccl-Pool01"));

    assertThat(found).singleElement().satisfies(f -> {
      assertThat(f.assessment().segment().displayName()).isEqualTo("nccl-Pool01");
      assertThat(f.explanation()).contains("31.4M free").contains("less than the 31.5M the proxy ops pool of NCCL 2.26 and later");
    });
  }

  @Test
  void failedCreationOnANearlyFullMountSaysAReceiveSegmentCannotFit() {
    List<AllocationFailures.Failure> found = AllocationFailures.find(judge(5 * MB, "empty:nccl-Recv01"));

    assertThat(found).singleElement().extracting(AllocationFailures.Failure::explanation).asString()
        .contains("4.8M free, less than the 9.2M an SHM receive segment needs");
  }

  @Test
  void failedCreationWithAmpleSpaceIsStillReportedAndSaysSpaceWasNotShort() {
    List<AllocationFailures.Failure> found = AllocationFailures.find(judge(60 * MB, "empty:nccl-Ampl01"));

    assertThat(found).singleElement().extracting(AllocationFailures.Failure::explanation).asString()
        .contains("enough for any NCCL segment of default size");
  }

  @Test
  void onlyEmptyUnheldNcclFilesAreFailures() {
    List<AllocationFailures.Failure> found = AllocationFailures.find(judge(1 * MB, "nccl-Full01", "empty:nccl-Zero01",
        "empty:torch_0"));

    assertThat(found).extracting(f -> f.assessment().segment().displayName()).containsExactly("nccl-Zero01");
  }

  @Test
  void everyPoolSizeChangeIsLargerThanTheLast() {
    long last = 0;
    for (NcclVersion v : NcclFacts.PROXY_POOL_RESIZED) {
      assertThat(NcclFacts.proxyPoolBytes(v)).as("pool of %s", v).isGreaterThan(last);
      last = NcclFacts.proxyPoolBytes(v);
    }
    assertThat(last).isEqualTo(NcclFacts.largestProxyPoolBytes());
  }
}
