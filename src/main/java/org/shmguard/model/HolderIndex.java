package org.shmguard.model;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who holds what, from one pass over /proc: every (dev, ino) on a watched device with the
 * processes holding it, one entry per process and kind of access. Holders whose device could not
 * be resolved ({@link Access#FD_UNRESOLVED}) are kept by inode number alone: an O_PATH one counts
 * as a holder of every watched file with that number; any other is an open file description, which
 * the reap's write lease sees for itself, so it is only a hint ({@link #hints}) that words the
 * reason when the lease is refused, and holds nothing (else any user's fds on a detached tmpfs of
 * their own would keep every segment with the same small inode numbers).
 */
public final class HolderIndex {
  private final Map<FileKey, List<HolderRef>> byKey;
  private final Map<Long, List<HolderRef>> unresolved;
  private final Map<Long, List<HolderRef>> hints;

  private HolderIndex(Map<FileKey, List<HolderRef>> byKey, Map<Long, List<HolderRef>> unresolved,
      Map<Long, List<HolderRef>> hints) {
    this.byKey = byKey;
    this.unresolved = unresolved;
    this.hints = hints;
  }

  public static HolderIndex empty() {
    return new HolderIndex(Map.of(), Map.of(), Map.of());
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Who holds {@code key}: by its device and inode, and any unresolved holder of its inode number. */
  public List<HolderRef> holders(FileKey key) {
    List<HolderRef> known = byKey.getOrDefault(key, List.of());
    List<HolderRef> maybe = unresolved.get(key.ino());
    if (maybe == null) {
      return known;
    }
    List<HolderRef> all = new ArrayList<>(known);
    all.addAll(maybe);
    return Collections.unmodifiableList(all);
  }

  public boolean isHeld(FileKey key) {
    return byKey.containsKey(key) || unresolved.containsKey(key.ino());
  }

  /**
   * The processes with an fd (not O_PATH) on inode number {@code ino} of a mount the pass could
   * not place: not holders, but the likely reason a write lease on a file with that number is refused.
   */
  public List<HolderRef> hints(long ino) {
    return hints.getOrDefault(ino, List.of());
  }

  /** How many open fds were found whose device is unknown, hints included. */
  public int unresolvedCount() {
    return unresolved.values().stream().mapToInt(List::size).sum() + hints.values().stream().mapToInt(List::size).sum();
  }

  /**
   * Whether any process holds any file on {@code dev}, visible or unlinked; an O_PATH fd whose
   * device could not be resolved may be on it, so it counts too.
   */
  public boolean heldOnDevice(Dev dev) {
    if (!unresolved.isEmpty()) {
      return true;
    }
    for (FileKey key : byKey.keySet()) {
      if (key.dev().equals(dev)) {
        return true;
      }
    }
    return false;
  }

  public Set<FileKey> keys() {
    return Collections.unmodifiableSet(byKey.keySet());
  }

  /** Every pid that holds anything on a watched device, in order. */
  public Set<Integer> pids() {
    Set<Integer> pids = new TreeSet<>();
    byKey.values().forEach(list -> list.forEach(h -> pids.add(h.pid())));
    unresolved.values().forEach(list -> list.forEach(h -> pids.add(h.pid())));
    return pids;
  }

  /** Collects holders; one entry per (file, pid, access), keeping the largest mapping seen. */
  public static final class Builder {
    private final Map<FileKey, List<HolderRef>> byKey = new HashMap<>();
    private final Map<Long, List<HolderRef>> unresolved = new HashMap<>();
    private final Map<Long, List<HolderRef>> hints = new HashMap<>();

    public Builder add(FileKey key, HolderRef ref) {
      return add(byKey.computeIfAbsent(key, k -> new ArrayList<>(2)), ref);
    }

    /** An fd on inode {@code ino} of a device the pass could not tell ({@link Access#FD_UNRESOLVED}). */
    public Builder addUnresolved(long ino, HolderRef ref) {
      if (ref.access() != Access.FD_UNRESOLVED) {
        throw new IllegalArgumentException("an unresolved holder must have access FD_UNRESOLVED, not " + ref.access());
      }
      return add(unresolved.computeIfAbsent(ino, k -> new ArrayList<>(2)), ref);
    }

    /** Like {@link #addUnresolved}, for an fd that is an open file description: a hint, not a holder. */
    public Builder addHint(long ino, HolderRef ref) {
      if (ref.access() != Access.FD_UNRESOLVED) {
        throw new IllegalArgumentException("a hint must have access FD_UNRESOLVED, not " + ref.access());
      }
      return add(hints.computeIfAbsent(ino, k -> new ArrayList<>(2)), ref);
    }

    private Builder add(List<HolderRef> list, HolderRef ref) {
      for (int i = 0; i < list.size(); i++) {
        HolderRef h = list.get(i);
        if (h.pid() == ref.pid() && h.access() == ref.access()) {
          if (ref.bytes() > h.bytes()) {
            list.set(i, ref);
          }
          return this;
        }
      }
      list.add(ref);
      return this;
    }

    public HolderIndex build() {
      Map<FileKey, List<HolderRef>> copy = new HashMap<>();
      byKey.forEach((k, v) -> copy.put(k, List.copyOf(v)));
      Map<Long, List<HolderRef>> maybe = new HashMap<>();
      unresolved.forEach((k, v) -> maybe.put(k, List.copyOf(v)));
      Map<Long, List<HolderRef>> hinted = new HashMap<>();
      hints.forEach((k, v) -> hinted.put(k, List.copyOf(v)));
      return new HolderIndex(Collections.unmodifiableMap(copy), Collections.unmodifiableMap(maybe),
          Collections.unmodifiableMap(hinted));
    }
  }
}
