package org.shmguard.model;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What one listing of a mount's root counted, whatever it kept: every regular file and its bytes,
 * the files whose names a reap pattern allows, and how many of those were kept as {@link Segment}s
 * for judging. Files no pattern allows are only counted, so a mount of a million files costs a
 * count, not a million objects.
 *
 * <pre>{@code
 * MountContents c = snapshot.contents(mount.dev());
 * if (c.unexamined() > 0) { ... more reapable-named files than one pass examines ... }
 * }</pre>
 *
 * @param files regular files directly in the root
 * @param fileBytes their allocated bytes (st_blocks * 512)
 * @param otherEntries entries that are not regular files on this device (directories, links, FIFOs, mounts)
 * @param matching regular files whose names a reap pattern allows and no deny entry names
 * @param matchingBytes their allocated bytes
 * @param examined how many of {@code matching} were kept as segments: the oldest by last change,
 *     up to {@code limit} of those that may be reapable and as many of those that are not (held at
 *     the previous pass, or hard-linked)
 * @param limit reap.examineLimit
 * @param largest the largest regular files in the root whatever their names, largest first: a few
 *     (the listing keeps a small fixed number), so that an alert names what fills the mount
 */
public record MountContents(Dev dev, long files, long fileBytes, long otherEntries, long matching, long matchingBytes,
    int examined, int limit, List<LargeFile> largest) {
  /** How many of the largest files a listing keeps per mount: a few names for an alert, a fixed cost. */
  public static final int LARGEST_KEPT = 5;

  /** Counts without the largest files (fixtures, and listings that keep none). */
  public MountContents(Dev dev, long files, long fileBytes, long otherEntries, long matching, long matchingBytes,
      int examined, int limit) {
    this(dev, files, fileBytes, otherEntries, matching, matchingBytes, examined, limit, List.of());
  }

  public MountContents {
    Objects.requireNonNull(dev, "dev");
    if (files < 0 || fileBytes < 0 || otherEntries < 0 || matching < 0 || matchingBytes < 0 || examined < 0) {
      throw new IllegalArgumentException("counts are not negative: files " + files + ", fileBytes " + fileBytes
          + ", otherEntries " + otherEntries + ", matching " + matching + ", matchingBytes " + matchingBytes
          + ", examined " + examined);
    }
    if (matching > files || examined > matching) {
      throw new IllegalArgumentException("examined (" + examined + ") <= matching (" + matching + ") <= files ("
          + files + ") must hold");
    }
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
    largest = List.copyOf(largest);
    if (largest.size() > files || largest.size() > LARGEST_KEPT) {
      throw new IllegalArgumentException("largest (" + largest.size() + " files) <= files (" + files + ") and <= " + LARGEST_KEPT + " must hold");
    }
  }

  /** Counts made from the segments themselves, for a snapshot built without a bounded listing (tests, fixtures). */
  public static MountContents ofAll(Dev dev, Iterable<Segment> segments) {
    long n = 0;
    long bytes = 0;
    List<LargeFile> largest = new ArrayList<>();
    for (Segment s : segments) {
      if (s.mountDev().equals(dev)) {
        n++;
        bytes += s.allocatedBytes();
        if (s.allocatedBytes() > 0) {
          largest.add(new LargeFile(s.displayName(), s.ino(), s.allocatedBytes(), s.uid()));
        }
      }
    }
    largest.sort(Comparator.comparingLong(LargeFile::allocatedBytes).reversed());
    return new MountContents(dev, n, bytes, 0, n, bytes, (int) Math.min(Integer.MAX_VALUE, n),
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, n)), largest.subList(0, Math.min(LARGEST_KEPT, largest.size())));
  }

  /** Files a pattern allows that this pass did not examine: later passes reach them as earlier ones are reaped. */
  public long unexamined() {
    return matching - examined;
  }

  /** Every entry in the root: what the file-count alert compares with the limit. */
  public long entries() {
    return files + otherEntries;
  }
}
