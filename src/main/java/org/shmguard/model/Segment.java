package org.shmguard.model;

import java.time.Instant;
import java.util.Objects;
import org.shmguard.text.Names;

/**
 * A regular file directly in a watched mount's root, as lstat saw it during a scan.
 *
 * @param name the raw name (not necessarily UTF-8)
 * @param sizeBytes st_size
 * @param allocatedBytes st_blocks * 512: what the file takes from the tmpfs
 * @param ctimeNanos ctime in nanoseconds since the epoch, part of the identity the reaper re-checks
 * @param btimeNanos the birth time (statx btime) in nanoseconds since the epoch, or -1 where the
 *     filesystem did not say; no process that started after it made the file
 */
public record Segment(
    Dev mountDev,
    byte[] name,
    long ino,
    long sizeBytes,
    long allocatedBytes,
    int mode,
    int uid,
    int nlink,
    long mtimeNanos,
    long ctimeNanos,
    long btimeNanos) {

  public Segment {
    Objects.requireNonNull(mountDev, "mountDev");
    Objects.requireNonNull(name, "name");
    name = name.clone();
  }

  /** A segment whose birth time is not known (fixtures, filesystems without btime). */
  public Segment(Dev mountDev, byte[] name, long ino, long sizeBytes, long allocatedBytes, int mode, int uid, int nlink,
      long mtimeNanos, long ctimeNanos) {
    this(mountDev, name, ino, sizeBytes, allocatedBytes, mode, uid, nlink, mtimeNanos, ctimeNanos, -1);
  }

  /** Whether the filesystem recorded when the file was made. */
  public boolean bornKnown() {
    return btimeNanos >= 0;
  }

  @Override
  public byte[] name() {
    return name.clone();
  }

  public FileKey key() {
    return new FileKey(mountDev, ino);
  }

  public String displayName() {
    return Names.display(name);
  }

  /** The name as text, for pattern matching: bytes that are not UTF-8 become U+FFFD and match no literal. */
  public String nameText() {
    return textOf(name);
  }

  /** A raw name as text, for pattern matching: bytes that are not UTF-8 become U+FFFD and match no literal. */
  public static String textOf(byte[] rawName) {
    return new String(rawName, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** Whether another name links to the same file: unlinking this one would free nothing, so it is never reaped. */
  public boolean hasOtherLinks() {
    return nlink > 1;
  }

  /** The last change in nanoseconds since the epoch: what the grace and the oldest-first order go by. */
  public long lastChangeNanos() {
    return Math.max(mtimeNanos, ctimeNanos);
  }

  /** The last change: the later of mtime and ctime. */
  public Instant lastChange() {
    long nanos = lastChangeNanos();
    return Instant.ofEpochSecond(Math.floorDiv(nanos, 1_000_000_000L), Math.floorMod(nanos, 1_000_000_000L));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Segment s
        && s.mountDev.equals(mountDev)
        && java.util.Arrays.equals(s.name, name)
        && s.ino == ino
        && s.sizeBytes == sizeBytes
        && s.allocatedBytes == allocatedBytes
        && s.mode == mode
        && s.uid == uid
        && s.nlink == nlink
        && s.mtimeNanos == mtimeNanos
        && s.ctimeNanos == ctimeNanos;
  }

  @Override
  public int hashCode() {
    return Objects.hash(mountDev, java.util.Arrays.hashCode(name), ino, ctimeNanos);
  }

  @Override
  public String toString() {
    return "Segment[" + displayName() + " " + key() + " " + sizeBytes + "B]";
  }
}
