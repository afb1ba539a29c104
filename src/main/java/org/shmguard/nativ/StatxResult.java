package org.shmguard.nativ;

import com.sun.jna.Memory;

/** The fields of struct statx that shmguard uses; the layout is the same on every architecture. */
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
    int ctimeNsec) {
  static final int SIZE = 256;
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
        m.getInt(104));
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
