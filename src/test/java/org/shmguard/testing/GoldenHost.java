package org.shmguard.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Access;
import org.shmguard.model.CreatorCandidates;
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
import org.shmguard.policy.Judgement;
import org.shmguard.policy.ReapPolicy;

/**
 * A host built by hand for the golden-output tests (node_exporter's e2e-output.txt, our way): one
 * /dev/shm with a file of each verdict, a hidden mapping, fixed times, pids and inodes, so what
 * users parse ({@code scan --json}, the metrics page) can be compared byte for byte with a file
 * checked in under src/test/resources/golden. {@code -Dgolden.update=true} rewrites those files;
 * review the diff before committing it.
 */
public final class GoldenHost {
  public static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");
  private static final Dev DEV = Dev.of(0, 25);

  private GoldenHost() {}

  private static Segment file(String name, long ino, long size, Duration age) {
    long t = NOW.minus(age).getEpochSecond() * 1_000_000_000L;
    return new Segment(DEV, name.getBytes(StandardCharsets.UTF_8), ino, size, size, 0100600, 1000, 1, t, t, t);
  }

  /** The judgement of the hand-built host: held, leaked after its holder's exit, in grace, ignored, a dead creator's, reported only. */
  public static Judgement judgement() {
    ShmMount shm = new ShmMount(DEV, "/dev/shm", "/dev/shm", MountOrigin.HOST, "rw,nosuid,nodev", null, List.of(), null,
        new ShmMount.Usage(64L << 20, 12L << 20, 52L << 20, 16384, 16370));
    Segment held = file("nccl-Held01", 11, 9637892, Duration.ofMinutes(3));
    Segment leaked = file("nccl-Leak01", 12, 4194304, Duration.ofSeconds(40));
    Segment young = file("nccl-Young1", 13, 4096, Duration.ofSeconds(5));
    Segment denied = file("cuda.shm.0", 14, 8192, Duration.ofHours(1));
    Segment torch = file("torch_4242_3735928559_0", 15, 1 << 20, Duration.ofMinutes(10));
    Segment psm = file("psm_0123abcd", 16, 65536, Duration.ofMinutes(20));
    ProcessInfo rank0 = new ProcessInfo(100, "python3", 1000, "alice", "pod:1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718", 5_000);
    ProcessInfo rank1 = new ProcessInfo(101, "python3", 1000, "alice", "pod:1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718", 5_001);
    ProcessInfo other = new ProcessInfo(102, "ucx_perftest", 1001, "bob", null, 6_000);
    BitSet before = new BitSet();
    before.set(100);
    before.set(101);
    Snapshot earlier = new Snapshot(NOW.minusSeconds(5), List.of(shm), List.of(held, leaked), HolderIndex.builder()
        .add(held.key(), new HolderRef(100, Access.FD, "/dev/shm/nccl-Held01", false, held.sizeBytes(), Use.WRITE))
        .add(leaked.key(), new HolderRef(101, Access.MAP, "/dev/shm/nccl-Leak01", false, leaked.sizeBytes(), Use.WRITE))
        .build(), before, Map.of(100, rank0, 101, rank1), List.of(), List.of(), true, 2);
    HolderHistory history = HolderHistory.empty().next(earlier);

    BitSet live = new BitSet();
    live.set(100);
    live.set(102);
    HolderIndex now = HolderIndex.builder()
        .add(held.key(), new HolderRef(100, Access.FD, "/dev/shm/nccl-Held01", false, held.sizeBytes(), Use.WRITE))
        .add(held.key(), new HolderRef(100, Access.MAP, "/dev/shm/nccl-Held01", false, held.sizeBytes(), Use.WRITE))
        .add(new org.shmguard.model.FileKey(DEV, 99), new HolderRef(102, Access.MAP, "/dev/shm/ucx_shm_posix_77 (deleted)",
            true, 2L << 20, Use.WRITE))
        .build();
    Snapshot snap = new Snapshot(NOW, List.of(shm), List.of(held, leaked, young, denied, torch, psm), now, live,
        Map.of(100, rank0, 102, other), List.of(), List.of(), true, 3)
        .withCreators(new CreatorCandidates(Set.of(4242), Map.of(), null));
    ReapPolicy policy;
    try {
      policy = org.shmguard.config.ConfigLoader.defaults().reap().policy(); // the shipped defaults
    } catch (org.shmguard.config.ConfigException e) {
      throw new AssertionError(e.format(), e);
    }
    return Judge.judge(snap, history, policy);
  }

  /** Compares {@code actual} with the golden file {@code name}, or rewrites it under -Dgolden.update=true. */
  public static String golden(String name, String actual) throws IOException {
    Path file = Path.of("src/test/resources/golden", name);
    if (Boolean.getBoolean("golden.update")) {
      Files.createDirectories(file.getParent());
      Files.writeString(file, actual);
    }
    return Files.readString(file);
  }
}
