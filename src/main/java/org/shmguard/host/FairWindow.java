package org.shmguard.host;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;
import org.shmguard.model.Segment;

/**
 * The files one listing keeps of one set, at most {@code limit} of them, chosen so that no user's
 * crowd of files takes another's places. A file's tier comes first: files whose names shmguard may
 * reap (tier 0) before those it only ever reports (tier 1), so that no number of reported-only
 * files keeps a leak from being examined. Within a tier the places are shared evenly over the
 * files' owners (max-min: an owner with fewer files than an even part keeps all of them, the rest
 * is split over the others), and each owner's places go to its oldest files. Where an even split
 * leaves places over, or there are more owners than places, owners take turns from one listing to
 * the next: the order starts at {@code cursor} and {@link #nextCursor()} says where the next
 * listing of the mount starts.
 *
 * <pre>{@code
 * FairWindow w = new FairWindow(share, cursor);
 * for (...) { w.offer(segment, mayReap ? 0 : 1); }
 * List<Segment> kept = new ArrayList<>(); w.addTo(kept);
 * cursor = w.nextCursor();
 * }</pre>
 *
 * <p>Memory is that of the kept files: at most {@code limit} segments, and one entry for each
 * owner that keeps one. While no more than {@code limit} files are offered they are only listed;
 * past that each offer costs O(log limit), as the oldest-first heap it replaces did.
 */
final class FairWindow {
  /** Newest first: the head of an owner's queue is the file it gives up first. */
  private static final Comparator<Segment> NEWEST_FIRST = (a, b) -> SegmentLister.OLDEST_FIRST.compare(b, a);
  static final int TIERS = 2;

  private final int limit;
  private final int cursor;
  private final Tier[] tiers = new Tier[TIERS];
  /** Until more than {@code limit} files are offered (most mounts, most passes): the files and their tiers, as offered. */
  private List<Segment> plain = new ArrayList<>();
  private List<Integer> plainTiers = new ArrayList<>();
  private int size;
  private boolean full;

  /**
   * @param limit the most files kept (0 keeps none)
   * @param cursor the uid whose turn comes first where owners take turns
   */
  FairWindow(int limit, int cursor) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative: " + limit);
    }
    this.limit = limit;
    this.cursor = cursor;
    for (int t = 0; t < TIERS; t++) {
      tiers[t] = new Tier();
    }
  }

  /** One owner's kept files in one tier. */
  private final class Owner {
    final int uid;
    final PriorityQueue<Segment> files = new PriorityQueue<>(2, NEWEST_FIRST);

    Owner(int uid) {
      this.uid = uid;
    }

    /** Where this owner's turn falls: its distance from the cursor, over the uids as unsigned numbers. */
    long turn() {
      return Integer.toUnsignedLong(uid - cursor);
    }
  }

  /** One tier's owners, ordered so that the last gives up a place first: most files, then latest turn. */
  private final class Tier {
    final Map<Integer, Owner> owners = new HashMap<>();
    final TreeSet<Owner> order = new TreeSet<>(Comparator.<Owner>comparingInt(o -> o.files.size())
        .thenComparingLong(Owner::turn));

    boolean isEmpty() {
      return order.isEmpty();
    }

    void add(Segment s) {
      Owner o = owners.get(s.uid());
      if (o == null) {
        o = new Owner(s.uid());
        owners.put(s.uid(), o);
      } else {
        order.remove(o);
      }
      o.files.add(s);
      order.add(o);
    }

    /** Gives up the newest file of {@code o}. */
    void removeNewest(Owner o) {
      order.remove(o);
      o.files.poll();
      if (o.files.isEmpty()) {
        owners.remove(o.uid);
      } else {
        order.add(o);
      }
    }
  }

  /** Offers a file of {@code tier} (0: a name shmguard may reap; 1: one it only reports). */
  void offer(Segment s, int tier) {
    if (tier < 0 || tier >= TIERS) {
      throw new IllegalArgumentException("tier is 0 or 1: " + tier);
    }
    if (size < limit) {
      if (plain != null) {
        plain.add(s);
        plainTiers.add(tier);
      } else {
        tiers[tier].add(s);
      }
      size++;
      return;
    }
    full = true;
    if (limit == 0) {
      return;
    }
    if (plain != null) { // the first file over the limit: only now are owners and turns needed
      for (int i = 0; i < plain.size(); i++) {
        tiers[plainTiers.get(i)].add(plain.get(i));
      }
      plain = null;
      plainTiers = null;
    }
    int worst = TIERS - 1;
    while (tiers[worst].isEmpty()) {
      worst--;
    }
    if (tier > worst) {
      return;
    }
    Tier t = tiers[worst];
    Owner last = t.order.last();
    if (tier < worst) {
      t.removeNewest(last);
      tiers[tier].add(s);
      return;
    }
    Owner mine = t.owners.get(s.uid());
    int k = mine == null ? 0 : mine.files.size();
    int most = last.files.size();
    boolean myTurnBefore = Integer.toUnsignedLong(s.uid() - cursor) < last.turn();
    if (mine != last && (k <= most - 2 || (k == most - 1 && myTurnBefore))) {
      t.removeNewest(last); // the owner with the most places gives one up
      t.add(s);
    } else if (mine != null && SegmentLister.OLDEST_FIRST.compare(s, mine.files.peek()) < 0) {
      t.removeNewest(mine); // the owner's share is full: its oldest files keep it
      t.add(s);
    }
  }

  int size() {
    return size;
  }

  void addTo(List<Segment> out) {
    if (plain != null) {
      out.addAll(plain);
      return;
    }
    for (Tier t : tiers) {
      for (Owner o : t.owners.values()) {
        out.addAll(o.files);
      }
    }
  }

  /**
   * Where the next listing's turns start: after the owner that took the last place given by turn
   * (most files, latest turn, in the last tier that kept any), when some file had to be left out;
   * the same cursor when everything offered was kept.
   */
  int nextCursor() {
    if (!full) {
      return cursor;
    }
    for (int t = TIERS - 1; t >= 0; t--) {
      if (!tiers[t].isEmpty()) {
        return tiers[t].order.last().uid + 1;
      }
    }
    return cursor;
  }

  /** The kept files of each tier, for tests. */
  List<Integer> perTier() {
    List<Integer> n = new ArrayList<>();
    if (plain != null) {
      for (int t = 0; t < TIERS; t++) {
        int tier = t;
        n.add((int) plainTiers.stream().filter(x -> x == tier).count());
      }
      return n;
    }
    for (Tier t : tiers) {
      n.add(t.order.stream().mapToInt(o -> o.files.size()).sum());
    }
    return n;
  }
}
