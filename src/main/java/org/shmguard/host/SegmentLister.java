package org.shmguard.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import org.shmguard.model.Dev;
import org.shmguard.model.FileKey;
import org.shmguard.model.MountContents;
import org.shmguard.model.Segment;
import org.shmguard.model.ShmMount;
import org.shmguard.nativ.DirHandle;
import org.shmguard.nativ.Linux;
import org.shmguard.nativ.StatxResult;

/**
 * Lists the regular files directly in a mount's root through a directory handle, with lstat:
 * no link is followed, no subdirectory entered, and a path that no longer reaches the mount's
 * device is refused.
 *
 * <p>Memory does not grow with the mount: names stream from getdents64 one buffer at a time,
 * every file is counted, and only files whose names {@link Selection#examines} allows are kept,
 * at most {@link Selection#limit} of them. Files the previous pass saw held, and hard-linked
 * files, are kept apart, up to the same limit: a user who holds many old files open, or links many
 * names to one file, cannot crowd out a newer leak, and such a file is still judged (and its
 * holders remembered) when it is kept. Within each set ({@link FairWindow}) names shmguard may
 * reap come before names it only reports, the places are shared evenly over the files' owners,
 * each owner's going to its oldest files (those nearest the end of their grace, or past it), and
 * owners take turns from one listing of a mount to the next where places run short: no other
 * user's files, however many, keep a leak from being examined. Whatever their names, the few largest files are kept too
 * ({@link LargestFiles}), so that what fills a mount can be named.
 *
 * <pre>{@code
 * SegmentLister.Listing l = new SegmentLister(new SegmentLister.Selection(policy::examines, 10_000)).list(mount);
 * l.segments(); l.contents().unexamined();
 * }</pre>
 */
public final class SegmentLister {
  /** Oldest first by last change; the inode breaks ties, so the choice does not depend on directory order. */
  static final Comparator<Segment> OLDEST_FIRST = (a, b) -> {
    int byChange = Long.compare(a.lastChangeNanos(), b.lastChangeNanos());
    return byChange != 0 ? byChange : Long.compare(a.ino(), b.ino());
  };
  /** Mounts whose turns are remembered at most: past it they start again from uid 0 (fair, only less rotated). */
  private static final int TURNS_KEPT = 4096;

  private final Linux linux;
  private final Selection selection;
  /** Where each mount's next listing starts the owners' turns: [0] the oldest files, [1] those set apart. */
  private final Map<Dev, int[]> turns = new ConcurrentHashMap<>();

  /**
   * Which files a listing keeps.
   *
   * @param examines whether a name (as {@link Segment#textOf} makes it) is one the policy judges
   * @param limit the most files kept per mount and listing
   * @param mayReap whether a judged name is one the policy may reap on that mount; the others it
   *     only reports, and they take only the places these leave ({@link FairWindow})
   */
  public record Selection(Predicate<String> examines, int limit, BiPredicate<ShmMount, String> mayReap) {
    public Selection {
      Objects.requireNonNull(examines, "examines");
      Objects.requireNonNull(mayReap, "mayReap");
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be at least 1: " + limit);
      }
    }

    /** Every judged name one the policy may reap. */
    public Selection(Predicate<String> examines, int limit) {
      this(examines, limit, (mount, name) -> true);
    }

    /** Keeps every regular file, up to {@code limit}: for callers that judge names themselves. */
    public static Selection everything(int limit) {
      return new Selection(name -> true, limit);
    }
  }

  public SegmentLister(Selection selection) {
    this(Linux.get(), selection);
  }

  SegmentLister(Linux linux, Selection selection) {
    this.linux = linux;
    this.selection = selection;
  }

  /**
   * The files kept from one mount, what the listing counted, and what kept it from being listed.
   *
   * @param keptOldest how many of {@code segments} are the oldest that may be reapable
   * @param keptApart how many are set apart: held at the previous pass, or hard-linked
   */
  public record Listing(List<Segment> segments, MountContents contents, String problem, int keptOldest, int keptApart) {
    public Listing {
      segments = List.copyOf(segments);
    }

    public Listing(List<Segment> segments, MountContents contents, String problem) {
      this(segments, contents, problem, segments.size(), 0);
    }
  }

  /** The most files kept per mount and listing (reap.examineLimit). */
  public int limit() {
    return selection.limit();
  }

  public Listing list(ShmMount mount) {
    return list(mount, key -> false);
  }

  /** @param heldBefore whether the previous pass saw a holder of this file */
  public Listing list(ShmMount mount, Predicate<FileKey> heldBefore) {
    Opened opened = open(mount);
    if (opened.problem() != null) {
      return new Listing(List.of(), null, opened.problem());
    }
    try (DirHandle dir = opened.dir()) {
      return list(mount, dir, heldBefore);
    }
  }

  /**
   * The mount's root, opened through its path and checked to be the mount's device; or why not.
   * This is the part that walks a path (through other mounts, a container's root) and so may
   * block on a filesystem that stops answering: callers bound it with a deadline
   * ({@link PathWalks}). The caller closes the handle.
   */
  public Opened open(ShmMount mount) {
    DirHandle dir = null;
    try {
      dir = linux.openDirectory(mount.path());
      StatxResult self = dir.self();
      Dev dev = Dev.of(self.devMajor(), self.devMinor());
      if (!dev.equals(mount.dev())) {
        dir.close();
        return new Opened(null, mount.path() + " is now device " + dev + ", not " + mount.dev() + "; not listed");
      }
      return new Opened(dir, null);
    } catch (IOException e) {
      if (dir != null) {
        dir.close();
      }
      return new Opened(null, "cannot list " + mount.path() + ": " + e.getMessage());
    }
  }

  /** A mount's root handle, or the reason there is none. */
  public record Opened(DirHandle dir, String problem) {}

  /**
   * Lists through a handle {@link #open} verified to be the watched tmpfs: names and statx
   * relative to it, in the kernel's own memory, so no deadline is needed however many files the
   * mount holds (a million take seconds on a busy host, which a path-walk deadline would
   * mistake for a filesystem that stopped answering).
   */
  public Listing list(ShmMount mount, DirHandle dir, Predicate<FileKey> heldBefore) {
    return list(mount, dir, heldBefore, new ExamineBudget.Share(selection.limit(), selection.limit()));
  }

  /**
   * The same, keeping at most {@code share}'s numbers of files instead of the selection's limit:
   * this mount's part of a budget shared over all mounts ({@link ExamineBudget}). Every file is
   * still counted; a share of 0 keeps none.
   */
  public Listing list(ShmMount mount, DirHandle dir, Predicate<FileKey> heldBefore, ExamineBudget.Share share) {
    if (share.oldest() < 0 || share.oldest() > selection.limit() || share.apart() < 0 || share.apart() > selection.limit()) {
      throw new IllegalArgumentException("a share is 0 to " + selection.limit() + " of each set: " + share);
    }
    int[] turn = turns.getOrDefault(mount.dev(), new int[2]);
    Counter counter = new Counter(dir, mount, selection, heldBefore, share, turn);
    try {
      dir.forEachName(counter::accept);
    } catch (UncheckedIOException e) {
      return new Listing(List.of(), null, "cannot list " + mount.path() + ": " + e.getCause().getMessage());
    } catch (IOException e) {
      return new Listing(List.of(), null, "cannot list " + mount.path() + ": " + e.getMessage());
    }
    if (turns.size() >= TURNS_KEPT && !turns.containsKey(mount.dev())) {
      turns.clear();
    }
    turns.put(mount.dev(), counter.nextTurns());
    return new Listing(counter.kept(), counter.contents(), null, counter.keptOldest(), counter.keptApart());
  }

  /** One listing's counts and its bounded sets of kept files. */
  private static final class Counter {
    private final DirHandle dir;
    private final Dev dev;
    private final ShmMount mount;
    private final Selection selection;
    private final Predicate<FileKey> heldBefore;
    private final FairWindow oldest;
    private final FairWindow setAside;
    private final LargestFiles largest = new LargestFiles();
    private long files;
    private long fileBytes;
    private long other;
    private long matching;
    private long matchingBytes;

    Counter(DirHandle dir, ShmMount mount, Selection selection, Predicate<FileKey> heldBefore, ExamineBudget.Share share,
        int[] turn) {
      this.dir = dir;
      this.dev = mount.dev();
      this.mount = mount;
      this.selection = selection;
      this.heldBefore = heldBefore;
      this.oldest = new FairWindow(share.oldest(), turn[0]);
      this.setAside = new FairWindow(share.apart(), turn[1]);
    }

    void accept(byte[] name) {
      StatxResult st;
      try {
        st = dir.lstat(name);
      } catch (NoSuchFileException e) {
        return; // removed while we listed
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (!st.isRegularFile() || st.devMajor() != dev.major() || st.devMinor() != dev.minor()) {
        other++;
        return;
      }
      files++;
      fileBytes += st.allocatedBytes();
      largest.offer(name, st.ino(), st.allocatedBytes(), st.uid());
      if (!selection.examines().test(Segment.textOf(name))) {
        return;
      }
      matching++;
      matchingBytes += st.allocatedBytes();
      Segment s = new Segment(dev, name, st.ino(), st.size(), st.allocatedBytes(), st.mode(), st.uid(), st.nlink(),
          st.mtimeSec() * 1_000_000_000L + st.mtimeNsec(), st.ctimeSec() * 1_000_000_000L + st.ctimeNsec(),
          st.btimeNanos());
      // Files that cannot be reaped now (held last pass, or hard-linked) are kept apart: any number
      // of them, however old, leaves the oldest others their places. In each set, names shmguard
      // only reports take only the places left by names it may reap, and owners share them fairly.
      int tier = selection.mayReap().test(mount, s.nameText()) ? 0 : 1;
      (heldBefore.test(s.key()) || s.hasOtherLinks() ? setAside : oldest).offer(s, tier);
    }

    int[] nextTurns() {
      return new int[] {oldest.nextCursor(), setAside.nextCursor()};
    }

    int keptOldest() {
      return oldest.size();
    }

    int keptApart() {
      return setAside.size();
    }

    List<Segment> kept() {
      List<Segment> list = new ArrayList<>(oldest.size() + setAside.size());
      oldest.addTo(list);
      setAside.addTo(list);
      list.sort(OLDEST_FIRST);
      return list;
    }

    MountContents contents() {
      return new MountContents(dev, files, fileBytes, other, matching, matchingBytes, oldest.size() + setAside.size(),
          selection.limit(), largest.largestFirst());
    }
  }
}
