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
 * be resolved ({@link Access#FD_UNRESOLVED}) are kept by inode number alone and count as holders
 * of every watched file with that number.
 */
public final class HolderIndex {
  private final Map<FileKey, List<HolderRef>> byKey;
  private final Map<Long, List<HolderRef>> unresolved;

  private HolderIndex(Map<FileKey, List<HolderRef>> byKey, Map<Long, List<HolderRef>> unresolved) {
    this.byKey = byKey;
    this.unresolved = unresolved;
  }

  public static HolderIndex empty() {
    return new HolderIndex(Map.of(), Map.of());
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

  /** How many open fds were found whose device is unknown. */
  public int unresolvedCount() {
    return unresolved.values().stream().mapToInt(List::size).sum();
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
      return new HolderIndex(Collections.unmodifiableMap(copy), Collections.unmodifiableMap(maybe));
    }
  }
}
