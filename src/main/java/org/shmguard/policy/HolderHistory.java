package org.shmguard.policy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.model.FileKey;
import org.shmguard.model.HolderRef;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.Snapshot;

/**
 * The holders the daemon has seen for each visible segment, across passes. It lets a segment be
 * reaped as soon as every process that held it has exited, without waiting out the grace period,
 * and it is the evidence ("last held by ...") logged with each reap. Immutable: each pass makes
 * the next one.
 */
public final class HolderHistory {
  private static final HolderHistory EMPTY = new HolderHistory(Map.of());
  private final Map<FileKey, List<ProcessInfo>> lastHolders;

  private HolderHistory(Map<FileKey, List<ProcessInfo>> lastHolders) {
    this.lastHolders = lastHolders;
  }

  public static HolderHistory empty() {
    return EMPTY;
  }

  /** The processes last seen holding {@code key}; empty if none were ever seen. */
  public List<ProcessInfo> lastHolders(FileKey key) {
    return lastHolders.getOrDefault(key, List.of());
  }

  /**
   * True when holders were seen earlier and every one of them has exited since: its pid is gone,
   * or now belongs to a process that started later. A holder that is alive but let go does not count.
   */
  public boolean allHoldersExited(FileKey key, Snapshot now) {
    List<ProcessInfo> seen = lastHolders.get(key);
    if (seen == null || seen.isEmpty()) {
      return false;
    }
    for (ProcessInfo p : seen) {
      if (now.isAlive(p.pid())) {
        ProcessInfo current = now.processes().get(p.pid());
        boolean reused = current != null && current.startTicks() != p.startTicks() && p.startTicks() >= 0;
        if (!reused) {
          return false;
        }
      }
    }
    return true;
  }

  /** The history after {@code snapshot}: current holders recorded, vanished segments forgotten. */
  public HolderHistory next(Snapshot snapshot) {
    Map<FileKey, List<ProcessInfo>> next = new HashMap<>();
    for (Segment s : snapshot.segments()) {
      FileKey key = s.key();
      List<HolderRef> refs = snapshot.holders().holders(key);
      if (!refs.isEmpty()) {
        Map<Integer, ProcessInfo> byPid = new LinkedHashMap<>();
        for (HolderRef r : refs) {
          ProcessInfo info = snapshot.processes().get(r.pid());
          byPid.putIfAbsent(r.pid(), info != null ? info : new ProcessInfo(r.pid(), "?", -1, null, null, -1));
        }
        next.put(key, List.copyOf(byPid.values()));
      } else if (lastHolders.containsKey(key)) {
        next.put(key, lastHolders.get(key));
      }
    }
    return new HolderHistory(Map.copyOf(next));
  }

  public int size() {
    return lastHolders.size();
  }
}
