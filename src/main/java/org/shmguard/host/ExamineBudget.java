package org.shmguard.host;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.shmguard.model.MountOrigin;
import org.shmguard.model.ShmMount;

/**
 * The files one pass may keep over all mounts ({@code reap.examineTotal}), shared out mount by
 * mount as they are listed, so that memory is bounded for the whole host and not only per mount.
 * The host's /dev/shm and configured mounts come first, then the namespaces shmguard may act in
 * (root's containers), for which the first leave half the total; within each, a mount gets at most
 * {@code reap.examineLimit} and an even part of what is left for the mounts still to come, so a
 * mount that needs less leaves more for the others. Mounts shmguard only reports (an ordinary user's namespaces) get nothing: they are
 * measured, never listed, and no user can take a share from the host or from root's containers.
 *
 * <pre>{@code
 * ExamineBudget budget = new ExamineBudget(mounts, 10_000, 20_000);
 * for (ShmMount m : budget.listed()) {
 *   Listing l = lister.list(m, dir, heldBefore, budget.shareOf(m));
 *   budget.used(l.keptOldest(), l.keptApart());
 * }
 * }</pre>
 *
 * Each share bounds two kept sets, each with a total of its own (the oldest files, and those set
 * apart because they cannot be reaped now), so a pass keeps at most twice {@code total} files, and
 * a user who links or holds many names in the host's /dev/shm takes no place from a leak elsewhere.
 */
public final class ExamineBudget {
  private final int perMount;
  private final int total;
  private final List<ShmMount> listed;
  /** What the first tier may not take while root's containers wait: half the total, or none when there are none. */
  private final int reserved;
  /** What is left of each kept set's total: [0] the oldest files, [1] those set apart. */
  private final int[] left;
  private int next;

  /**
   * @param mounts the mounts found, in discovery order
   * @param perMount reap.examineLimit
   * @param total reap.examineTotal
   */
  public ExamineBudget(List<ShmMount> mounts, int perMount, int total) {
    if (perMount < 1 || total < perMount) {
      throw new IllegalArgumentException("need 1 <= perMount <= total: perMount " + perMount + ", total " + total);
    }
    this.perMount = perMount;
    this.total = total;
    this.left = new int[] {total, total};
    List<ShmMount> acted = new ArrayList<>();
    for (ShmMount m : mounts) {
      if (m.mayAct()) {
        acted.add(m);
      }
    }
    acted.sort(Comparator.comparingInt(ExamineBudget::tier)); // stable: discovery order within a tier
    this.listed = List.copyOf(acted);
    this.reserved = acted.stream().anyMatch(m -> tier(m) == 1) ? total / 2 : 0;
  }

  /** 0 for the host's and configured mounts, 1 for a container's or pod's: the order shares are handed out in. */
  static int tier(ShmMount m) {
    return m.origin().ofContainer() ? 1 : 0;
  }

  /** The mounts to list, in the order to list them; every mount not here is only measured. */
  public List<ShmMount> listed() {
    return listed;
  }

  /**
   * How many files one mount may keep: at most {@code oldest} of those that may be reapable (the
   * oldest first), and at most {@code apart} of those that cannot be reaped now (held at the
   * previous pass, or hard-linked). Two totals, so that no number of held or linked files in one
   * mount takes a place from a leak in another.
   */
  public record Share(int oldest, int apart) {}

  /**
   * The share of {@code m}, the next of {@link #listed()} (call once per mount, in order, and
   * {@link #used} or {@link #skipped} after it): for each kept set, at most the per-mount limit,
   * and what is left split evenly over the mounts of its tier still to come (rounded up, so that a
   * little left over many mounts still reaches the first of them). The host's and configured
   * mounts come first but leave half of each total to root's containers when there are any.
   */
  public Share shareOf(ShmMount m) {
    if (next >= listed.size() || listed.get(next) != m) {
      throw new IllegalStateException("shares are handed out in listed() order, one per mount");
    }
    int tier = tier(m);
    int sameTierToCome = 0;
    for (int i = next; i < listed.size() && tier(listed.get(i)) == tier; i++) {
      sameTierToCome++;
    }
    return new Share(share(0, tier, sameTierToCome), share(1, tier, sameTierToCome));
  }

  private int share(int set, int tier, int sameTierToCome) {
    long available = Math.max(0, left[set] - (tier == 0 ? reserved : 0));
    long even = Math.min(available, (available + sameTierToCome - 1) / sameTierToCome);
    return (int) Math.min(perMount, even);
  }

  /** The mount just shared out kept {@code oldest} and {@code apart} files (within its share). */
  public void used(int oldest, int apart) {
    if (oldest < 0 || oldest > left[0] || apart < 0 || apart > left[1]) {
      throw new IllegalArgumentException("used must be within what is left (" + left[0] + ", " + left[1] + "): "
          + oldest + ", " + apart);
    }
    left[0] -= oldest;
    left[1] -= apart;
    next++;
  }

  /** The mount just shared out was not listed (gone, not answering): its share stays for the others. */
  public void skipped() {
    next++;
  }

  public int total() {
    return total;
  }
}
