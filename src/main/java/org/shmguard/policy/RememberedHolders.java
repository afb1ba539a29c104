package org.shmguard.policy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.ProcessInfo;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.model.Snapshot;

/**
 * Who held which segment, as a daemon saw it before a restart: what the next daemon needs so that
 * a leak the first one knew (every holder gone) is reaped at once, not after the grace. Each entry
 * names the file by what identifies it across a restart on the same boot (the mount's id and
 * device, the inode, the name and the last change to the nanosecond) and its holders by pid and
 * start time. {@link #admit} takes an entry only where the host still shows exactly that file on
 * exactly that mount; anything else is dropped, and the file waits out its grace as if never seen.
 *
 * <pre>{@code
 * RememberedHolders kept = RememberedHolders.from(snapshot, engineHistory, RememberedHolders.MAX_HOLDERS);
 * HolderHistory h = kept.admit(nextSnapshot, HolderHistory.empty());   // after the restart
 * }</pre>
 */
public final class RememberedHolders {
  /** The most holders kept over all entries: the bound on what a restart carries over. */
  public static final int MAX_HOLDERS = 16_384;
  private static final RememberedHolders NONE = new RememberedHolders(List.of());
  private final List<Entry> entries;

  private RememberedHolders(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  public static RememberedHolders none() {
    return NONE;
  }

  /** These entries; more than {@link #MAX_HOLDERS} holders in all is refused. */
  public static RememberedHolders of(List<Entry> entries) {
    if (entries.stream().mapToInt(e -> e.holders().size()).sum() > MAX_HOLDERS) {
      throw new IllegalArgumentException("more than " + MAX_HOLDERS + " holders");
    }
    return new RememberedHolders(entries);
  }

  /**
   * One segment and its holders.
   *
   * @param mountId the mount's id (mountinfo's first field), never 0: a mount never verified is not remembered
   * @param lastChangeNanos the later of mtime and ctime, in nanoseconds: a file changed since is not the one remembered
   * @param holders every process seen holding it (at most {@link HolderHistory#MAX_HOLDERS}), each with its start time
   */
  public record Entry(Dev mountDev, long mountId, long ino, byte[] name, long lastChangeNanos, List<ProcessInfo> holders) {
    public Entry {
      Objects.requireNonNull(mountDev, "mountDev");
      Objects.requireNonNull(name, "name");
      if (mountId <= 0) {
        throw new IllegalArgumentException("mountId must be positive: " + mountId);
      }
      if (ino <= 0) {
        throw new IllegalArgumentException("ino must be positive: " + ino);
      }
      if (name.length == 0 || name.length > 255 || indexOf(name, (byte) '/') >= 0 || indexOf(name, (byte) 0) >= 0) {
        throw new IllegalArgumentException("name must be a file name of 1 to 255 bytes");
      }
      holders = List.copyOf(holders);
      if (holders.isEmpty() || holders.size() > HolderHistory.MAX_HOLDERS) {
        throw new IllegalArgumentException("holders must be 1 to " + HolderHistory.MAX_HOLDERS + ", not " + holders.size());
      }
      for (ProcessInfo p : holders) {
        if (p.pid() <= 0 || p.startTicks() < 0) {
          throw new IllegalArgumentException("a holder needs its pid and start time: " + p);
        }
      }
      name = name.clone();
    }

    @Override
    public byte[] name() {
      return name.clone();
    }

    FileKey key() {
      return new FileKey(mountDev, ino);
    }

    private static int indexOf(byte[] bytes, byte b) {
      for (int i = 0; i < bytes.length; i++) {
        if (bytes[i] == b) {
          return i;
        }
      }
      return -1;
    }
  }

  public List<Entry> entries() {
    return entries;
  }

  /**
   * What to carry over from a pass: each segment of {@code snap} whose holders {@code history}
   * knows completely, on a verified mount, with every holder's start time; at most
   * {@code maxHolders} holders in all, the rest left out.
   */
  public static RememberedHolders from(Snapshot snap, HolderHistory history, int maxHolders) {
    List<Entry> kept = new ArrayList<>();
    int holders = 0;
    for (Segment s : snap.segments()) {
      List<ProcessInfo> seen = history.completeHolders(s.key());
      ShmMount m = snap.mount(s.mountDev());
      if (seen.isEmpty() || m == null || m.mountId() <= 0 || s.ino() <= 0 || seen.stream().anyMatch(p -> p.startTicks() < 0)
          || holders + seen.size() > Math.min(maxHolders, MAX_HOLDERS)) {
        continue;
      }
      kept.add(new Entry(s.mountDev(), m.mountId(), s.ino(), s.name(), s.lastChangeNanos(), seen));
      holders += seen.size();
    }
    return new RememberedHolders(kept);
  }

  /**
   * {@code current} with the remembered holders of each segment {@code snap} still shows as the
   * same file: same device and inode, on a mount of the same id, with the same name and the same
   * last change. The judge then decides as the daemon before the restart would have: every holder
   * gone (its pid missing, or now another process's, by start time) makes the file leaked at once.
   */
  public HolderHistory admit(Snapshot snap, HolderHistory current) {
    if (entries.isEmpty()) {
      return current;
    }
    Map<FileKey, Entry> byKey = new HashMap<>();
    entries.forEach(e -> byKey.put(e.key(), e));
    Map<FileKey, List<ProcessInfo>> admitted = new HashMap<>();
    for (Segment s : snap.segments()) {
      Entry e = byKey.get(s.key());
      ShmMount m = snap.mount(s.mountDev());
      if (e != null && m != null && m.mountId() == e.mountId() && s.lastChangeNanos() == e.lastChangeNanos()
          && Arrays.equals(s.name(), e.name)) {
        admitted.put(s.key(), e.holders());
      }
    }
    return current.with(admitted);
  }
}
