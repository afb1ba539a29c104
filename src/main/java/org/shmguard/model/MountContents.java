package org.shmguard.model;

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
 */
public record MountContents(Dev dev, long files, long fileBytes, long otherEntries, long matching, long matchingBytes,
    int examined, int limit) {

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
  }

  /** Counts made from the segments themselves, for a snapshot built without a bounded listing (tests, fixtures). */
  public static MountContents ofAll(Dev dev, Iterable<Segment> segments) {
    long n = 0;
    long bytes = 0;
    for (Segment s : segments) {
      if (s.mountDev().equals(dev)) {
        n++;
        bytes += s.allocatedBytes();
      }
    }
    return new MountContents(dev, n, bytes, 0, n, bytes, (int) Math.min(Integer.MAX_VALUE, n),
        (int) Math.max(1, Math.min(Integer.MAX_VALUE, n)));
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
