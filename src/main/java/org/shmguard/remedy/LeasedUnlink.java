package org.shmguard.remedy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
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
import org.shmguard.text.Names;
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
 *   <li>before anything else, read every mount namespace's mountinfo (once per reap: a batch's
 *       read after its renames serves the next batch): a file already mounted somewhere is kept
 *       as it is, and its name is never freed;
 *   <li>open the name relative to the mount's root handle (read-only, no link followed, not
 *       blocking) and check on the descriptor that it is the file judged;
 *   <li>take a write lease: the kernel grants it only if no other open file description of the
 *       inode exists anywhere, including those no /proc walk shows (an fd in flight in a Unix
 *       socket, a file registered in an io_uring). Refused: keep the file;
 *   <li>rename the name to an unguessable hidden one that ends with the name itself
 *       ({@code .shmguard-reap-<16 hex>-NAME}, where that fits in 255 bytes), so that no lookup
 *       from now on finds it and the file still says which name is its own;
 *   <li>wait {@link #SETTLE_MILLIS}, then ask the kernel whether the lease is breaking: an open
 *       that looked the name up before the rename and has since reached the file breaks it (and
 *       waits for us). Breaking: put the file back and keep it;
 *   <li>read every mount namespace's mountinfo ({@link BindMounts}): a file mounted somewhere
 *       (a bind mount of it, made before the rename, now shows the hidden name as its root) is
 *       held by that mount, which opens nothing and so does not stop a lease. Mounted, or the
 *       mounts cannot all be read: put it back and keep it;
 *   <li>if another user's file took the name meanwhile, put the file back; otherwise unlink the
 *       hidden name (after checking it still leads to our inode), release the lease, close.
 * </ol>
 * Every put-back restores the file under its own name, whatever was created there meanwhile: with
 * RENAME_NOREPLACE where the name is free, else with RENAME_EXCHANGE, which moves the file that
 * took the name to the hidden name in the same step. That file stays its creator's, and is never
 * reaped there while another user's file holds the name it took ({@link #takenBy}); nor is a file
 * left under a hidden name (shmguard killed before the unlink) reaped while another user's file
 * holds the name it ends with.
 *
 * <p>Files are taken in batches of up to {@link #BATCH}, so that one wait serves a batch: steps
 * 2-4 for each file of the batch, one wait, then steps 5-7 for each. A blocked opener waits for the
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
  /** Length of a hidden name without the name it ends with: the prefix and 16 hex digits. */
  static final int HIDDEN_HEAD = HIDDEN_PREFIX.length() + 16;
  /** The longest name a file may have (NAME_MAX). */
  private static final int NAME_MAX = 255;
  /**
   * How often a put-back tries again when the name is freed between a rename that found it taken
   * and an exchange that found it gone: a user who creates and removes it in a loop wins each try
   * only by chance.
   */
  static final int PUT_BACK_TRIES = 64;

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
    MountCheck[] lastRead = {null};
    for (int from = 0; from < jobs.size(); from += BATCH) {
      out.addAll(batch(dir, jobs.subList(from, Math.min(jobs.size(), from + BATCH)), dryRun, lastRead));
    }
    return out;
  }

  /**
   * One batch. {@code lastRead} holds the mounts read last in this reap (after the previous batch's
   * renames), which serve as this batch's look before its renames: a bind made since then is seen
   * after them. Updated with this batch's own read.
   */
  private List<Done> batch(DirHandle dir, List<Job> jobs, boolean dryRun, MountCheck[] lastRead) {
    List<Staged> staged = jobs.stream().map(Staged::new).toList();
    try {
      // A file mounted somewhere now is kept without being renamed: its name is never freed. By the
      // name as text: a name that is not UTF-8 may be missed here, and is caught after the rename.
      MountCheck before = dryRun ? null : lastRead[0] != null ? lastRead[0] : mountCheck(staged);
      boolean renamed = false;
      for (Staged st : staged) {
        String held = before == null || before.unknown() != null ? null : before.heldBy(st.job.segment().name());
        if (held != null) {
          st.done = new Done(Result.SKIPPED, held);
          continue;
        }
        stage(dir, st, dryRun);
        renamed |= st.hidden != null;
      }
      if (renamed) {
        boolean stopping = settle.getAsBoolean();
        MountCheck mounts = stopping ? null : mountCheck(staged);
        lastRead[0] = mounts;
        for (Staged st : staged) {
          if (st.hidden != null) {
            String held = stopping ? "shmguard is stopping" : mounts.heldBy(st.hidden);
            st.done = held != null ? putBack(dir, st, held) : finish(dir, st);
          }
        }
      } else if (dryRun && staged.stream().anyMatch(st -> st.done.result() == Result.WOULD_REAP)) {
        MountCheck mounts = mountCheck(staged); // by the name as text: a name that is not UTF-8 may be missed here
        for (Staged st : staged) {
          String held = st.done.result() == Result.WOULD_REAP ? mounts.heldBy(st.job.segment().name()) : null;
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

  /** Steps 2-4: open, check, lease, rename. Sets {@code done} unless the file is now hidden and leased. */
  private void stage(DirHandle dir, Staged st, boolean dryRun) {
    Segment s = st.job.segment();
    try {
      String taken = takenBy(dir, s);
      if (taken != null) {
        st.done = new Done(Result.SKIPPED, taken);
        return;
      }
      st.file = dir.open(s.name());
      String changed = Reaper.changedSince(s, st.file.stat());
      if (changed != null) {
        st.done = new Done(Result.SKIPPED, changed);
      } else if (!st.file.tryWriteLease()) {
        st.done = new Done(Result.SKIPPED, st.job.refused() == null ? HELD_ELSEWHERE : HELD_ELSEWHERE + "; " + st.job.refused());
      } else if (dryRun) {
        st.done = new Done(Result.WOULD_REAP, st.job.reason());
      } else {
        byte[] hidden = hiddenName(ownName(s.name()));
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

  /**
   * The mounts of the batch's tmpfs whose root is a file of it, or why they could not all be read.
   * A hidden name is also found by its head (prefix and hex digits, ASCII whatever the name it ends
   * with), so that a bind of a file whose name is not UTF-8 is never missed after the rename.
   */
  private record MountCheck(Map<String, String> roots, Map<String, String> byHead, String unknown) {
    MountCheck(Map<String, String> roots, String unknown) {
      this(roots, headsOf(roots), unknown);
    }

    private static Map<String, String> headsOf(Map<String, String> roots) {
      Map<String, String> heads = new HashMap<>();
      roots.forEach((root, where) -> {
        if (root.startsWith("/" + HIDDEN_PREFIX) && root.length() > HIDDEN_HEAD) {
          heads.putIfAbsent(root.substring(1, 1 + HIDDEN_HEAD), where);
        }
      });
      return heads;
    }

    /** Why the file now named {@code name} (in the tmpfs's root) must be kept, or null if no mount holds it. */
    String heldBy(byte[] name) {
      if (unknown != null) {
        return unknown;
      }
      String where = roots.get("/" + Segment.textOf(name));
      if (where == null && isHidden(name)) {
        where = byHead.get(new String(name, 0, HIDDEN_HEAD, StandardCharsets.US_ASCII));
      }
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

  /** Steps 5 and 7 for a hidden, leased file: put it back if an open broke the lease or its name was taken, else unlink it. */
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
      String taken = takenBy(dir, s.uid(), ownName(s.name()));
      if (taken != null) {
        return putBack(dir, st, taken);
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

  /**
   * Renames the hidden name back, so that the file is under its own name again whatever happened
   * meanwhile: where the name is free, a plain rename that never replaces; where a file took it, an
   * exchange, which in one step restores ours and moves that file to the hidden name (still its
   * owner's, never served under this name, and never reaped there while ours holds the name: see
   * {@link #takenBy}). If both keep failing, the file stays loudly where it is.
   */
  private Done putBack(DirHandle dir, Staged st, String why) {
    Segment s = st.job.segment();
    byte[] name = s.name();
    String failure = null;
    for (int i = 0; i < PUT_BACK_TRIES && failure == null; i++) {
      try {
        dir.renameNoReplace(st.hidden, name);
        return new Done(Result.SKIPPED, why + "; it was put back");
      } catch (FileAlreadyExistsException taken) {
        // a file took the name while ours was set aside: exchange the two
      } catch (IOException e) {
        failure = e.getMessage();
        break;
      }
      try {
        dir.renameExchange(st.hidden, name);
        return new Done(Result.SKIPPED, why + "; it was put back" + displaced(dir, st));
      } catch (NoSuchFileException freed) {
        // the name was freed again before the exchange: try the plain rename once more
      } catch (IOException e) {
        failure = e.getMessage();
      }
    }
    if (failure == null) {
      failure = "its name was taken and freed again " + PUT_BACK_TRIES + " times";
    }
    LOG.error("{}: {}; putting it back failed ({}), so it is kept as {} in the same directory: rename it back "
        + "by hand", s.displayName(), why, failure, text(st.hidden));
    return new Done(Result.FAILED, why + "; putting it back failed (" + failure + "), so it is kept as "
        + text(st.hidden) + "; rename it back by hand");
  }

  /** After an exchange: what now lies under the hidden name, for the outcome and the log. */
  private String displaced(DirHandle dir, Staged st) {
    String what;
    try {
      StatxResult other = dir.lstat(st.hidden);
      what = "a file of uid " + other.uid() + " (inode " + other.ino() + ")";
    } catch (IOException e) {
      what = "a file (" + e.getMessage() + ")";
    }
    LOG.warn("{}: {} took its name while it was set aside; it was put back under its name, and that file moved to "
        + "{}, still its owner's", st.job.segment().displayName(), what, text(st.hidden));
    return ", in place of " + what + " that took its name meanwhile, which is now " + text(st.hidden)
        + ", still its owner's";
  }

  /**
   * Why a file of uid {@code uid}, under a hidden name, must not be reaped because another user's
   * file holds {@code own}, its own name (the name it was set aside from), or null. Reaping it from
   * the hidden name then would leave that other file, and that user, with its name.
   */
  private static String takenBy(DirHandle dir, int uid, byte[] own) throws IOException {
    StatxResult holder = dir.lstatIfAny(own); // usually free: no exception per reaped file
    if (holder == null || holder.uid() == uid) {
      return null;
    }
    return "its own name " + Names.display(own) + " now holds a file of uid " + holder.uid()
        + ", another user's: it is kept while that file holds its name";
  }

  /** {@link #takenBy} for a file as judged, before anything is done to it: only one found under a hidden name. */
  private static String takenBy(DirHandle dir, Segment s) throws IOException {
    byte[] own = ownName(s.name());
    return Arrays.equals(own, s.name()) ? null : takenBy(dir, s.uid(), own);
  }

  /** Whether {@code name} is one this class gives a file: the prefix and 16 characters, and maybe "-" and a name. */
  static boolean isHidden(byte[] name) {
    if (name.length < HIDDEN_HEAD || (name.length > HIDDEN_HEAD && name[HIDDEN_HEAD] != '-')) {
      return false;
    }
    for (int i = 0; i < HIDDEN_PREFIX.length(); i++) {
      if (name[i] != HIDDEN_PREFIX.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * The name a file named {@code name} belongs under: for a hidden name that ends with one, that
   * name; for any other name (a hidden one too long to carry it, one without), the name itself.
   */
  static byte[] ownName(byte[] name) {
    if (isHidden(name) && name.length > HIDDEN_HEAD + 1) {
      return Arrays.copyOfRange(name, HIDDEN_HEAD + 1, name.length);
    }
    return name.clone();
  }

  /** A fresh hidden name that ends with {@code own} where that fits in NAME_MAX, else without it. */
  private byte[] hiddenName(byte[] own) {
    byte[] r = new byte[8];
    random.nextBytes(r);
    byte[] head = (HIDDEN_PREFIX + HexFormat.of().formatHex(r)).getBytes(StandardCharsets.US_ASCII);
    if (head.length + 1 + own.length > NAME_MAX) {
      return head;
    }
    byte[] hidden = Arrays.copyOf(head, head.length + 1 + own.length);
    hidden[head.length] = '-';
    System.arraycopy(own, 0, hidden, head.length + 1, own.length);
    return hidden;
  }

  private static String text(byte[] name) {
    return Names.display(name);
  }
}
