package org.shmguard.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Access;
import org.shmguard.model.Dev;
import org.shmguard.model.HolderIndex;
import org.shmguard.model.HolderRef;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;
import org.shmguard.model.Use;
import org.shmguard.policy.HolderHistory;
import org.shmguard.policy.Judge;
import org.shmguard.policy.ReapPolicy;
import org.shmguard.text.Glob;

/** Whose exits the daemon watches after a pass, from a judgement built by hand (no kernel). */
class WatchedHoldersTest {
  private static final Dev DEV = Dev.of(0, 25);
  private static final Instant NOW = Instant.parse("2026-11-21T10:00:00Z");
  private static final ShmMount MOUNT = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw", null, List.of(),
      null, new ShmMount.Usage(64 << 20, 10 << 20, 54 << 20, 1000, 990));
  private static final ReapPolicy POLICY = new ReapPolicy(Duration.ofMinutes(2), List.of(Glob.of("nccl-*")), List.of(), true);

  private final List<Segment> segments = new ArrayList<>();
  private final HolderIndex.Builder holders = HolderIndex.builder();
  private final BitSet live = new BitSet();
  private final Map<Integer, ProcessInfo> infos = new HashMap<>();

  private Segment segment(String name) {
    long t = NOW.minusSeconds(600).getEpochSecond() * 1_000_000_000L;
    Segment s = new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), segments.size() + 10, 4096, 4096, 0100600, 1000,
        1, t, t);
    segments.add(s);
    return s;
  }

  private void hold(Segment s, int pid) {
    holders.add(s.key(), new HolderRef(pid, Access.FD, "/dev/shm/" + s.displayName(), false, s.sizeBytes(), Use.WRITE));
    live.set(pid);
    infos.put(pid, new ProcessInfo(pid, "python3", 1000, "alice", null, 4242 + pid));
  }

  private Map<Integer, ProcessInfo> watched() {
    Snapshot snap = new Snapshot(NOW, List.of(MOUNT), segments, holders.build(), live, infos, List.of(), List.of(), true,
        live.cardinality());
    return WatchedHolders.of(Judge.judge(snap, HolderHistory.empty(), POLICY));
  }

  @Test
  void everyHolderOfAHeldFileIsWatchedOnce() {
    Segment a = segment("nccl-A");
    Segment b = segment("nccl-B");
    hold(a, 7);
    hold(a, 8);
    hold(b, 7);

    assertThat(watched()).containsOnlyKeys(7, 8);
    assertThat(watched().get(7).startTicks()).isEqualTo(4242 + 7);
  }

  @Test
  void aFileNobodyHoldsWatchesNobody() {
    segment("nccl-C");

    assertThat(watched()).isEmpty();
  }
}
