package org.shmguard.daemon;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.shmguard.host.PathWalks;
import org.shmguard.model.Dev;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.Inotify;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One inotify watch on the root of every watched mount, kept in step with the mounts each pass
 * found. Reading the queue says only whether a pass is due: every pass is a full one, so a
 * thousand events or an overflowed queue cost one pass, and nothing is missed.
 */
final class MountWatches implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MountWatches.class);
  private final Inotify inotify;
  private final Map<Dev, Integer> wdByDev = new HashMap<>();
  private final Map<Dev, String> pathByDev = new HashMap<>();
  private long overflows;

  MountWatches(Inotify inotify) {
    this.inotify = inotify;
  }

  int fd() {
    return inotify.fd();
  }

  /** What reading the queue found. */
  record Drained(int events, boolean overflow, boolean mountGone) {}

  Drained drain() throws IOException {
    List<Inotify.Event> events = inotify.drain();
    boolean overflow = false;
    boolean gone = false;
    for (Inotify.Event e : events) {
      overflow |= e.is(Inotify.IN_Q_OVERFLOW);
      gone |= e.is(Inotify.IN_UNMOUNT | Inotify.IN_IGNORED | Inotify.IN_DELETE_SELF | Inotify.IN_MOVE_SELF);
    }
    if (overflow) {
      overflows++;
      LOG.debug("inotify queue overflowed; a full pass recovers every change");
    }
    return new Drained(events.size(), overflow, gone);
  }

  long overflows() {
    return overflows;
  }

  /**
   * Watches exactly {@code mounts}. Returns true when a watch was added: files created between
   * that mount's listing and its watch were not seen, so the caller runs one more pass.
   */
  boolean sync(List<ShmMount> mounts) {
    Map<Dev, ShmMount> want = new HashMap<>();
    mounts.forEach(m -> want.put(m.dev(), m));
    for (Dev dev : new ArrayList<>(wdByDev.keySet())) {
      ShmMount m = want.get(dev);
      if (m == null || !m.path().equals(pathByDev.get(dev))) {
        inotify.unwatch(wdByDev.remove(dev));
        pathByDev.remove(dev);
      }
    }
    boolean added = false;
    for (ShmMount m : mounts) {
      if (wdByDev.containsKey(m.dev())) {
        continue;
      }
      try {
        // inotify_add_watch walks the path, as listing does: bounded the same way
        wdByDev.put(m.dev(), PathWalks.shared().run(m.path(), () -> inotify.watch(m.path(), Inotify.SEGMENT_EVENTS)));
        pathByDev.put(m.dev(), m.path());
        added = true;
      } catch (IOException e) {
        LOG.warn("cannot watch {} for changes ({}); it is still swept every pass", m.displayName(), e.getMessage());
      }
    }
    return added;
  }

  int size() {
    return wdByDev.size();
  }

  @Override
  public void close() {
    inotify.close();
  }
}
