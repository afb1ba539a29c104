package org.shmguard.nativ;

import com.sun.jna.Memory;

/**
 * The fields of struct statx that shmguard uses; the layout is the same on every architecture.
 *
 * @param btimeNanos the birth time in nanoseconds since the epoch, or -1 where the filesystem does
 *     not record one (tmpfs does, since Linux 5.x)
 */
public record StatxResult(
    int devMajor,
    int devMinor,
    long ino,
    int mode,
    int nlink,
    int uid,
    long size,
    long blocks,
    long mtimeSec,
    int mtimeNsec,
    long ctimeSec,
    int ctimeNsec,
    long btimeNanos) {
  static final int SIZE = 256;
  /** STATX_BTIME: asked for with the basic fields, and set in stx_mask only where the filesystem has it. */
  static final int STATX_BTIME = 0x800;
  private static final int S_IFMT = 0170000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFLNK = 0120000;

  static StatxResult read(Memory m) {
    return read(m.getByteBuffer(0, SIZE).order(java.nio.ByteOrder.nativeOrder()));
  }

  /** The fields of a struct statx in a buffer of native byte order (offsets from linux/stat.h). */
  static StatxResult read(java.nio.ByteBuffer m) {
    return new StatxResult(
        m.getInt(136),
        m.getInt(140),
        m.getLong(32),
        Short.toUnsignedInt(m.getShort(28)),
        m.getInt(16),
        m.getInt(20),
        m.getLong(40),
        m.getLong(48),
        m.getLong(112),
        m.getInt(120),
        m.getLong(96),
        m.getInt(104),
        (m.getInt(0) & STATX_BTIME) != 0 ? m.getLong(80) * 1_000_000_000L + Integer.toUnsignedLong(m.getInt(88)) : -1);
  }

  public boolean isRegularFile() {
    return (mode & S_IFMT) == S_IFREG;
  }

  public boolean isDirectory() {
    return (mode & S_IFMT) == S_IFDIR;
  }

  public boolean isSymlink() {
    return (mode & S_IFMT) == S_IFLNK;
  }

  /** Bytes the filesystem has allocated (st_blocks is in 512-byte units). */
  public long allocatedBytes() {
    return blocks * 512;
  }
}
