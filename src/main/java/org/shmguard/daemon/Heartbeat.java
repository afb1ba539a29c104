package org.shmguard.daemon;

import java.io.IOException;
import java.util.function.Function;
import org.shmguard.host.PathWalks;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.FsUsage;
import org.shmguard.nativ.Linux;
import org.shmguard.policy.Judgement;

/**
 * The cheap look between full sweeps: one {@code statvfs} per mount the last full pass measured,
 * compared with what that pass saw. It reads no {@code /proc}, lists no directory and judges
 * nothing; it only says whether a full pass is due now: a mount whose size changed (a remount),
 * one that can no longer be measured (gone, or its namespace's last process exited), used bytes
 * moved by at least {@link #BYTES_PERCENT} % of the size (a tmpfs filling or emptying through
 * writes to mapped segments, which make no inotify event), or a file count changed in a mount
 * shmguard may act in (a file made or removed while inotify overflowed). A report-only mount's
 * file count is its user's business (they may churn it freely), so only its bytes count. What a
 * heartbeat cannot see (a holder gained or lost without an event, a file's contents) waits for the
 * full sweep.
 */
final class Heartbeat {
  static final int BYTES_PERCENT = 1;
  private final java.util.concurrent.atomic.AtomicLong beats = new java.util.concurrent.atomic.AtomicLong();
  private final Function<String, FsUsage> statvfs;

  Heartbeat(Function<String, FsUsage> statvfs) {
    this.statvfs = statvfs;
  }

  /**
   * The real statvfs(3), through {@link PathWalks} as a pass's (a path through another namespace's
   * root may stall in the kernel: the heartbeat then waits at most its deadline); a mount that
   * cannot be measured reads as null.
   */
  static Heartbeat system() {
    return new Heartbeat(path -> {
      try {
        return PathWalks.shared().run(path, () -> Linux.get().statvfs(path));
      } catch (IOException e) {
        return null;
      }
    });
  }

  /**
   * Why a full pass is due now, in a few words for the debug log, or null when every mount the
   * last full pass measured still agrees with it (or there was no pass yet: the first pass is due anyway).
   */
  String changeSince(Judgement last) {
    beats.incrementAndGet();
    if (last == null) {
      return null;
    }
    for (ShmMount m : last.snapshot().mounts()) {
      ShmMount.Usage then = m.usage();
      if (then == null) {
        continue; // the pass could not measure it either: nothing to compare
      }
      FsUsage now = statvfs.apply(m.path());
      String why = change(then, now, m.mayAct());
      if (why != null) {
        return m.displayName() + ": " + why;
      }
    }
    return null;
  }

  /** How {@code now} differs from {@code then} enough for a full pass, or null. */
  /** How many heartbeats ran since start. */
  long beats() {
    return beats.get();
  }

  static String change(ShmMount.Usage then, FsUsage now, boolean mayAct) {
    if (now == null) {
      return "cannot be measured";
    }
    if (now.sizeBytes() != then.sizeBytes()) {
      return "size " + then.sizeBytes() + " -> " + now.sizeBytes() + " bytes";
    }
    long moved = Math.abs(now.usedBytes() - then.usedBytes());
    if (moved > 0 && moved * 100 >= then.sizeBytes() * BYTES_PERCENT) {
      return "used " + then.usedBytes() + " -> " + now.usedBytes() + " bytes";
    }
    long usedInodes = now.inodes() - now.freeInodes();
    long thenInodes = then.inodes() - then.freeInodes();
    if (mayAct && usedInodes != thenInodes) {
      return "files " + thenInodes + " -> " + usedInodes;
    }
    return null;
  }
}
