package org.shmguard.remedy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Random;
import org.shmguard.model.Segment;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.ErrnoException;
import org.shmguard.nativ.LeaseUnavailableException;
import org.shmguard.nativ.OpenFile;
import org.shmguard.nativ.StatxResult;
import org.shmguard.remedy.ReapOutcome.Result;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last check before an unlink, the one no opener can slip past: a write lease held across
 * moving the name out of reach, a look for a pending break, and the unlink.
 *
 * <pre>{@code
 * LeasedUnlink.Done d = new LeasedUnlink().reap(dir, segment, reason, dryRun);
 * }</pre>
 *
 * <ol>
 *   <li>open the name relative to the mount's root handle (read-only, no link followed, not
 *       blocking) and check on the descriptor that it is the file judged;
 *   <li>take a write lease: the kernel grants it only if no other open file description of the
 *       inode exists anywhere, including those no /proc walk shows (an fd in flight in a Unix
 *       socket, a file registered in an io_uring). Refused: keep the file;
 *   <li>rename the name to an unguessable hidden one, so that no lookup from now on finds it;
 *   <li>wait {@link #SETTLE}, then ask the kernel whether the lease is breaking: an open that
 *       looked the name up before the rename and has since reached the file breaks it (and waits
 *       for us). Breaking: rename the file back and keep it;
 *   <li>otherwise unlink the hidden name (after checking it still leads to our inode), release the
 *       lease, close.
 * </ol>
 *
 * <p>The hidden name lives in the same directory rather than in a private directory of ours:
 * rename(2) cannot leave the tmpfs, so a private directory would have to be created (and left
 * behind by a crash, with the file in it and invisible to every scan) inside the very directory
 * ordinary users write to. In a sticky directory such as /dev/shm (1777) only the file's owner or
 * root can rename or unlink the hidden name, and the owner could do the same to the original name;
 * in a directory without the sticky bit anyone who may write it can already delete any file in it,
 * so the hidden name gives no one anything they lacked. Anyone who may read the directory sees the
 * hidden name for about a millisecond; opening it breaks the lease like any other open, and the
 * file is put back.
 */
final class LeasedUnlink {
  private static final Logger LOG = LoggerFactory.getLogger(LeasedUnlink.class);
  /**
   * How long the name stays out of reach, lease held, before the break check: enough for an open
   * that had already found the name, but not yet counted its open file, to reach the lease. That
   * step runs without sleeping in the kernel; only preemption or a stalled virtual CPU can stretch
   * it, so a millisecond covers it on every host but one starved for far longer.
   */
  static final long SETTLE_MILLIS = 1;
  static final String HIDDEN_PREFIX = ".shmguard-reap-";
  static final String HELD_ELSEWHERE = "something still holds it open that no process shows (an fd in flight in a Unix "
      + "socket, a file registered in an io_uring) or an open raced the check: the kernel refused a write lease";
  static final String RACED = "an open raced the reap: a process opened it while it was being removed";

  /** What became of one file. */
  record Done(Result result, String detail) {}

  private final Random random;

  LeasedUnlink() {
    this(new SecureRandom());
  }

  LeasedUnlink(Random random) {
    this.random = random;
  }

  Done reap(DirHandle dir, Segment s, String reason, boolean dryRun) {
    try (OpenFile f = dir.open(s.name())) {
      String changed = Reaper.changedSince(s, f.stat());
      if (changed != null) {
        return new Done(Result.SKIPPED, changed);
      }
      if (!f.tryWriteLease()) {
        return new Done(Result.SKIPPED, HELD_ELSEWHERE);
      }
      // From here every open of the inode, by any name, waits for this lease: keep it short.
      Done done = dryRun ? new Done(Result.WOULD_REAP, reason) : underLease(dir, f, s, reason);
      f.releaseLease();
      return done;
    } catch (NoSuchFileException e) {
      return new Done(Result.SKIPPED, "it is already gone");
    } catch (LeaseUnavailableException e) {
      return new Done(Result.SKIPPED, "leases are unavailable (" + e.getMessage() + "): kept, since nothing else "
          + "rules out a holder that no process shows; shmguard needs CAP_LEASE and fs.leases-enable=1");
    } catch (ErrnoException e) {
      if (e.isLink()) {
        return new Done(Result.SKIPPED, "it is no longer a regular file");
      }
      if (e.wouldBlock()) {
        return new Done(Result.SKIPPED, "another process holds a lease on it");
      }
      return new Done(Result.FAILED, e.getMessage());
    } catch (IOException e) {
      return new Done(Result.FAILED, e.getMessage());
    }
  }

  private Done underLease(DirHandle dir, OpenFile f, Segment s, String reason) throws IOException {
    // Only the rename below may throw out of here: after it, every failure puts the name back.
    byte[] hidden = hiddenName();
    try {
      dir.renameNoReplace(s.name(), hidden);
    } catch (NoSuchFileException e) {
      return new Done(Result.SKIPPED, "it is already gone");
    } catch (FileAlreadyExistsException e) {
      return new Done(Result.SKIPPED, "its hidden name " + text(hidden) + " was taken; it is tried again next pass");
    }
    try {
      Thread.sleep(SETTLE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return putBack(dir, s, hidden, "shmguard is stopping");
    }
    try {
      if (!f.writeLeaseIntact()) {
        return putBack(dir, s, hidden, RACED);
      }
      StatxResult st = dir.lstat(hidden);
      if (st.ino() != s.ino() || st.devMajor() != s.mountDev().major() || st.devMinor() != s.mountDev().minor()) {
        LOG.error("{}: its hidden name {} was replaced while the lease was held; nothing unlinked",
            s.displayName(), text(hidden));
        return new Done(Result.FAILED, "its hidden name " + text(hidden) + " was replaced while the lease was held; "
            + "nothing was unlinked");
      }
    } catch (IOException e) {
      return putBack(dir, s, hidden, e.getMessage());
    }
    try {
      dir.unlink(hidden);
    } catch (IOException e) {
      return putBack(dir, s, hidden, "the unlink failed: " + e.getMessage());
    }
    if (!f.writeLeaseIntact()) {
      // An open that found the name before the rename and reached the file only after the break
      // check, SETTLE_MILLIS later: it waits for this lease and gets the removed file.
      LOG.warn("{}: an open began during the unlink and gets the removed file", s.displayName());
      return new Done(Result.REAPED, reason + "; but an open began during the unlink and got the removed file");
    }
    return new Done(Result.REAPED, reason);
  }

  /** Renames the hidden name back: the file stays as it was found, or, if that name was taken, loudly where it is. */
  private Done putBack(DirHandle dir, Segment s, byte[] hidden, String why) {
    try {
      dir.renameNoReplace(hidden, s.name());
      return new Done(Result.SKIPPED, why + "; it was put back");
    } catch (IOException e) {
      LOG.error("{}: {}; putting it back failed ({}), so it is kept as {} in the same directory: rename it back "
          + "by hand", s.displayName(), why, e.getMessage(), text(hidden));
      return new Done(Result.FAILED, why + "; putting it back failed (" + e.getMessage() + "), so it is kept as "
          + text(hidden) + "; rename it back by hand");
    }
  }

  private byte[] hiddenName() {
    byte[] r = new byte[8];
    random.nextBytes(r);
    return (HIDDEN_PREFIX + HexFormat.of().formatHex(r)).getBytes(StandardCharsets.US_ASCII);
  }

  private static String text(byte[] name) {
    return new String(name, StandardCharsets.US_ASCII);
  }
}
