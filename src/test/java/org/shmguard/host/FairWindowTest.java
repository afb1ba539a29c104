package org.shmguard.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.shmguard.model.Dev;
import org.shmguard.model.Segment;

/** No user's crowd of files takes another's places in a listing's bounded window. */
class FairWindowTest {
  private static final Dev DEV = Dev.of(0, 99);
  private long ino;

  private Segment file(int uid, long changedAt) {
    long n = ++ino;
    return new Segment(DEV, ("f" + n).getBytes(StandardCharsets.UTF_8), n, 0, 0, 0100600, uid, 1, changedAt, changedAt);
  }

  private static List<Segment> kept(FairWindow w) {
    List<Segment> out = new ArrayList<>();
    w.addTo(out);
    return out;
  }

  @Test
  void namesItMayReapComeBeforeAnyNumberOfOlderReportedOnlyOnes() {
    FairWindow w = new FairWindow(100, 0);
    for (int i = 0; i < 20_000; i++) {
      w.offer(file(65534, i), 1);
    }
    Segment leak = file(1000, 1_000_000);
    w.offer(leak, 0);
    for (int i = 0; i < 500; i++) {
      w.offer(file(65534, 2_000_000 + i), 1);
    }
    assertThat(kept(w)).hasSize(100).contains(leak);
    assertThat(w.perTier()).containsExactly(1, 99);
  }

  @Test
  void oneOwnersCrowdOfOlderReapableNamesLeavesAnotherOwnerItsPlace() {
    FairWindow w = new FairWindow(10, 0);
    for (int i = 0; i < 20_000; i++) {
      w.offer(file(65534, i), 0);
    }
    Segment leak = file(1000, 1_000_000);
    w.offer(leak, 0);
    List<Segment> k = kept(w);
    assertThat(k).hasSize(10).contains(leak);
    assertThat(k).filteredOn(s -> s.uid() == 65534).extracting(Segment::lastChangeNanos)
        .as("the crowd's oldest").containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
  }

  @Test
  void moreOwnersThanPlacesTakeTurnsOverListings() {
    int owners = 50;
    int limit = 10;
    Set<Integer> seen = new HashSet<>();
    int cursor = 0;
    for (int listing = 0; listing < owners / limit; listing++) {
      FairWindow w = new FairWindow(limit, cursor);
      for (int uid = 1000; uid < 1000 + owners; uid++) {
        w.offer(file(uid, uid), 0); // the same files every listing, the lowest uid oldest
      }
      kept(w).forEach(s -> seen.add(s.uid()));
      cursor = w.nextCursor();
    }
    assertThat(seen).as("every owner examined within owners/limit listings").hasSize(owners);
  }

  /** Whatever the order files come in: the max-min share per owner, each owner's oldest, never over the limit. */
  @Test
  void anyOrderGivesEachOwnerAnEvenShareOfItsOldestFiles() {
    Random random = new Random(30);
    for (int round = 0; round < 300; round++) {
      int limit = random.nextInt(40);
      int owners = 1 + random.nextInt(8);
      List<Segment> files = new ArrayList<>();
      Map<Integer, Integer> offered = new HashMap<>();
      for (int i = random.nextInt(120); i > 0; i--) {
        int uid = random.nextInt(owners) * (random.nextBoolean() ? 1 : -7); // some above 2^31 as unsigned
        files.add(file(uid, random.nextInt(1000)));
        offered.merge(uid, 1, Integer::sum);
      }
      Collections.shuffle(files, random);
      FairWindow w = new FairWindow(limit, random.nextInt());
      files.forEach(s -> w.offer(s, 0));
      List<Segment> k = kept(w);
      assertThat(k).hasSize(Math.min(limit, files.size()));
      Map<Integer, Integer> got = new HashMap<>();
      k.forEach(s -> got.merge(s.uid(), 1, Integer::sum));
      for (var a : offered.entrySet()) {
        int mine = got.getOrDefault(a.getKey(), 0);
        if (mine < a.getValue()) { // left some out: no owner has more than one place over it
          for (int other : got.values()) {
            assertThat(other).as("round " + round + ": max-min share").isLessThanOrEqualTo(mine + 1);
          }
        }
        long newestKept = k.stream().filter(s -> s.uid() == a.getKey()).mapToLong(Segment::lastChangeNanos).max()
            .orElse(Long.MIN_VALUE);
        long olderLeftOut = files.stream().filter(s -> s.uid() == a.getKey() && !k.contains(s))
            .filter(s -> s.lastChangeNanos() < newestKept).count();
        assertThat(olderLeftOut).as("round " + round + ": each owner's oldest").isZero();
      }
    }
  }
}
