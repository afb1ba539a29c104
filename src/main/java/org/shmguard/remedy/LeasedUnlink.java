package org.shmguard.remedy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;
import org.shmguard.host.BindMounts;
import org.shmguard.host.HostPaths;
import org.shmguard.model.Dev;
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
 * List<LeasedUnlink.Done> done = new LeasedUnlink(HostPaths.system()).reap(dir, List.of(new LeasedUnlink.Job(segment, reason)), dryRun);
 * }</pre>
 *
 * <p>For each file:
 * <ol>
 *   <li>open the name relative to the mount's root handle (read-only, no link followed, not
 *       blocking) and check on the descriptor that it is the file judged;
 *   <li>take a write lease: the kernel grants it only if no other open file description of the
 *       inode exists anywhere, including those no /proc walk shows (an fd in flight in a Unix
 *       socket, a file registered in an io_uring). Refused: keep the file;
 *   <li>rename the name to an unguessable hidden one, so that no lookup from now on finds it;
 *   <li>wait {@link #SETTLE_MILLIS}, then ask the kernel whether the lease is breaking: an open
 *       that looked the name up before the rename and has since reached the file breaks it (and
 *       waits for us). Breaking: rename the file back and keep it;
 *   <li>read every mount namespace's mountinfo ({@link BindMounts}): a file mounted somewhere
 *       (a bind mount of it, made before the rename, now shows the hidden name as its root) is
 *       held by that mount, which opens nothing and so does not stop a lease. Mounted, or the
 *       mounts cannot all be read: rename it back and keep it;
 *   <li>otherwise unlink the hidden name (after checking it still leads to our inode), release
 *       the lease, close.
 * </ol>
 * Files are taken in batches of up to {@link #BATCH}, so that one wait serves a batch: steps 1-3
 * for each file of the batch, one wait, then steps 4-5 for each. A blocked opener waits for the
 * batch, a few milliseconds, never fs.lease-break-time.
 *
 * <p>The hidden name lives in the same directory rather than in a private directory of ours:
 * rename(2) cannot leave the tmpfs, so a private directory would have to be created (and left
 * behind by a crash, with the file in it and invisible to every scan) inside the very directory
 * ordinary users write to. In a sticky directory such as /dev/shm (1777) only the file's owner, the
 * directory's owner or root can rename or unlink the hidden name, as they could the original name;
 * in a directory without the sticky bit anyone who may write it can already delete any file in it,
 * so the hidden name gives no one anything they lacked. Anyone who may read the directory sees the
 * hidden name for a few milliseconds; opening it breaks the lease like any other open, and the
 * file is put back.
 */
final class LeasedUnlink {
  private static final Logger LOG = LoggerFactory.getLogger(LeasedUnlink.class);
  /**
   * How long the names stay out of reach, leases held, before the break check: enough for an open
   * that had already found a name, but not yet counted its open file, to reach the lease. That
   * step runs without sleeping in the kernel; only preemption or a stalled virtual CPU can stretch
   * it, so a millisecond covers it on every host but one starved for far longer.
   */
  static final long SETTLE_MILLIS = 1;
  /** Files under lease at once, at most: staging one takes about 10 us, so a batch holds its leases a few ms. */
  static final int BATCH = 128;
  static final String HIDDEN_PREFIX = ".shmguard-reap-";
  static final String HELD_ELSEWHERE = "something still holds it open that no process shows (an fd in flight in a Unix "
      + "socket, a file registered in an io_uring) or an open raced the check: the kernel refused a write lease";
  static final String RACED = "an open raced the reap: a process opened it while it was being removed";
  static final String MOUNTED = "it is mounted elsewhere, which holds it without opening it: at ";

  /** The files of a tmpfs mounted somewhere: root inside the tmpfs ("/NAME") -> where; see {@link BindMounts}. */
  interface MountedFiles {
    Map<String, String> roots(Dev dev) throws IOException;
  }

  /**
   * One file to reap, with the reason it was judged reapable.
   *
   * @param refused what may hold the file where the lease is refused (an fd on a mount not in
   *     mountinfo with its inode number), appended to the reason then; null if nothing is known
   */
  record Job(Segment segment, String reason, String refused) {
    Job(Segment segment, String reason) {
      this(segment, reason, null);
    }
  }

  /** What became of one file. */
  record Done(Result result, String detail) {}

  /** A file of the batch in progress: its descriptor, and its hidden name once renamed. */
  private static final class Staged {
    final Job job;
    OpenFile file;
    byte[] hidden;
    Done done;

    Staged(Job job) {
      this.job = job;
    }
  }

  private final Random random;
  private final BooleanSupplier settle;
  private final MountedFiles mounted;

  LeasedUnlink() {
    this(HostPaths.system());
  }

  LeasedUnlink(HostPaths paths) {
    this(new SecureRandom(), LeasedUnlink::sleepSettle, new BindMounts(paths)::roots);
  }

  /** With {@code settle}: the wait of step 4, true if shmguard is stopping (tests make an opener race in it). */
  LeasedUnlink(Random random, BooleanSupplier settle) {
    this(random, settle, new BindMounts(HostPaths.system())::roots);
  }

  LeasedUnlink(Random random, BooleanSupplier settle, MountedFiles mounted) {
    this.random = random;
    this.settle = settle;
    this.mounted = mounted;
  }

  /** Reaps (or, in a dry run, only leases) each job's file; the results in the jobs' order. */
  List<Done> reap(DirHandle dir, List<Job> jobs, boolean dryRun) {
    List<Done> out = new ArrayList<>(jobs.size());
    for (int from = 0; from < jobs.size(); from += BATCH) {
      out.addAll(batch(dir, jobs.subList(from, Math.min(jobs.size(), from + BATCH)), dryRun));
    }
    return out;
  }

  private List<Done> batch(DirHandle dir, List<Job> jobs, boolean dryRun) {
    List<Staged> staged = jobs.stream().map(Staged::new).toList();
    try {
      boolean renamed = false;
      for (Staged st : staged) {
        stage(dir, st, dryRun);
        renamed |= st.hidden != null;
      }
      if (renamed) {
        boolean stopping = settle.getAsBoolean();
        MountCheck mounts = stopping ? null : mountCheck(staged);
        for (Staged st : staged) {
          if (st.hidden != null) {
            String held = stopping ? "shmguard is stopping" : mounts.heldBy(text(st.hidden));
            st.done = held != null ? putBack(dir, st, held) : finish(dir, st);
          }
        }
      } else if (dryRun && staged.stream().anyMatch(st -> st.done.result() == Result.WOULD_REAP)) {
        MountCheck mounts = mountCheck(staged); // by the name as text: a name that is not UTF-8 may be missed here
        for (Staged st : staged) {
          String held = st.done.result() == Result.WOULD_REAP ? mounts.heldBy(st.job.segment().nameText()) : null;
          if (held != null) {
            st.done = new Done(Result.SKIPPED, held);
          }
        }
      }
    } finally {
      for (Staged st : staged) {
        if (st.hidden != null && st.done == null) {
          st.done = putBack(dir, st, "the reap was cut short"); // only after an unexpected error
        }
        if (st.file != null) {
          st.file.releaseLease(); // lets a waiting opener go on at once
          st.file.close();
        }
      }
    }
    return staged.stream().map(st -> st.done).toList();
  }

  /** Steps 1-3: open, check, lease, rename. Sets {@code done} unless the file is now hidden and leased. */
  private void stage(DirHandle dir, Staged st, boolean dryRun) {
    Segment s = st.job.segment();
    try {
      st.file = dir.open(s.name());
      String changed = Reaper.changedSince(s, st.file.stat());
      if (changed != null) {
        st.done = new Done(Result.SKIPPED, changed);
      } else if (!st.file.tryWriteLease()) {
        st.done = new Done(Result.SKIPPED, st.job.refused() == null ? HELD_ELSEWHERE : HELD_ELSEWHERE + "; " + st.job.refused());
      } else if (dryRun) {
        st.done = new Done(Result.WOULD_REAP, st.job.reason());
      } else {
        byte[] hidden = hiddenName();
        dir.renameNoReplace(s.name(), hidden);
        st.hidden = hidden;
      }
    } catch (NoSuchFileException e) {
      st.done = new Done(Result.SKIPPED, "it is already gone");
    } catch (FileAlreadyExistsException e) {
      st.done = new Done(Result.SKIPPED, "its hidden name was taken; it is tried again next pass");
    } catch (LeaseUnavailableException e) {
      st.done = new Done(Result.SKIPPED, ReapOutcome.NO_LEASES + " (" + e.getMessage() + "): kept, since nothing "
          + "else rules out a holder that no process shows; shmguard needs CAP_LEASE and fs.leases-enable=1");
    } catch (ErrnoException e) {
      if (e.isLink()) {
        st.done = new Done(Result.SKIPPED, "it is no longer a regular file");
      } else if (e.wouldBlock()) {
        st.done = new Done(Result.SKIPPED, "another process holds a lease on it");
      } else {
        st.done = new Done(Result.FAILED, e.getMessage());
      }
    } catch (IOException e) {
      st.done = new Done(Result.FAILED, e.getMessage());
    }
  }

  /** The mounts of the batch's tmpfs whose root is a file of it, or why they could not all be read. */
  private record MountCheck(Map<String, String> roots, String unknown) {
    /** Why the file now named {@code name} (in the tmpfs's root) must be kept, or null if no mount holds it. */
    String heldBy(String name) {
      if (unknown != null) {
        return unknown;
      }
      String where = roots.get("/" + name);
      return where == null ? null : MOUNTED + where;
    }
  }

  private MountCheck mountCheck(List<Staged> staged) {
    try {
      return new MountCheck(mounted.roots(staged.get(0).job.segment().mountDev()), null);
    } catch (IOException e) {
      return new MountCheck(Map.of(), ReapOutcome.MOUNTS_UNREAD + " (" + e.getMessage() + ")");
    }
  }

  /** The wait of step 4; true if the thread was interrupted (shmguard is stopping). */
  private static boolean sleepSettle() {
    try {
      Thread.sleep(SETTLE_MILLIS);
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    }
  }

  /** Steps 4-5 for a hidden, leased file: put it back if an open broke the lease, else unlink it. */
  private Done finish(DirHandle dir, Staged st) {
    Segment s = st.job.segment();
    try {
      if (!st.file.writeLeaseIntact()) {
        return putBack(dir, st, RACED);
      }
      StatxResult now = dir.lstat(st.hidden);
      if (now.ino() != s.ino() || now.devMajor() != s.mountDev().major() || now.devMinor() != s.mountDev().minor()) {
        LOG.error("{}: its hidden name {} was replaced while the lease was held; nothing unlinked",
            s.displayName(), text(st.hidden));
        return new Done(Result.FAILED, "its hidden name " + text(st.hidden) + " was replaced while the lease was "
            + "held; nothing was unlinked");
      }
      if (now.nlink() != 1) {
        return putBack(dir, st, "it has " + now.nlink() + " links now");
      }
      dir.unlink(st.hidden);
    } catch (IOException e) {
      return putBack(dir, st, e.getMessage());
    }
    try {
      if (!st.file.writeLeaseIntact()) {
        // An open that found the name before the rename and reached the file only after the break
        // check, SETTLE_MILLIS later: it waits for this lease and gets the removed file.
        LOG.warn("{}: an open began during the unlink and gets the removed file", s.displayName());
        return new Done(Result.REAPED, st.job.reason() + "; but an open began during the unlink and got the removed file");
      }
    } catch (IOException e) {
      // unlinked all the same; the look afterwards only reports
    }
    return new Done(Result.REAPED, st.job.reason());
  }

  /** Renames the hidden name back: the file stays as it was found, or, if that fails, loudly where it is. */
  private Done putBack(DirHandle dir, Staged st, String why) {
    Segment s = st.job.segment();
    try {
      dir.renameNoReplace(st.hidden, s.name());
      return new Done(Result.SKIPPED, why + "; it was put back");
    } catch (IOException e) {
      LOG.error("{}: {}; putting it back failed ({}), so it is kept as {} in the same directory: rename it back "
          + "by hand", s.displayName(), why, e.getMessage(), text(st.hidden));
      return new Done(Result.FAILED, why + "; putting it back failed (" + e.getMessage() + "), so it is kept as "
          + text(st.hidden) + "; rename it back by hand");
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
