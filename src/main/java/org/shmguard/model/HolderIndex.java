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
 * processes holding it, one entry per process and kind of access.
 */
public final class HolderIndex {
  private final Map<FileKey, List<HolderRef>> byKey;

  private HolderIndex(Map<FileKey, List<HolderRef>> byKey) {
    this.byKey = byKey;
  }

  public static HolderIndex empty() {
    return new HolderIndex(Map.of());
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<HolderRef> holders(FileKey key) {
    return byKey.getOrDefault(key, List.of());
  }

  public boolean isHeld(FileKey key) {
    return byKey.containsKey(key);
  }

  public Set<FileKey> keys() {
    return Collections.unmodifiableSet(byKey.keySet());
  }

  /** Every pid that holds anything on a watched device, in order. */
  public Set<Integer> pids() {
    Set<Integer> pids = new TreeSet<>();
    byKey.values().forEach(list -> list.forEach(h -> pids.add(h.pid())));
    return pids;
  }

  /** Collects holders; one entry per (file, pid, access), keeping the largest mapping seen. */
  public static final class Builder {
    private final Map<FileKey, List<HolderRef>> byKey = new HashMap<>();

    public Builder add(FileKey key, HolderRef ref) {
      List<HolderRef> list = byKey.computeIfAbsent(key, k -> new ArrayList<>(2));
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
      return new HolderIndex(Collections.unmodifiableMap(copy));
    }
  }
}
