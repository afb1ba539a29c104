package org.shmguard.nativ;

import com.sun.jna.Memory;

/** Capacity of one filesystem as statvfs(3) reports it, in bytes and inodes. */
public record FsUsage(long sizeBytes, long freeBytes, long availableBytes, long inodes, long freeInodes, boolean readOnly) {
  // struct statvfs on LP64 glibc: 11 unsigned longs, then spare ints.
  static final int STRUCT_SIZE = 112;
  private static final long ST_RDONLY = 1;

  static FsUsage read(Memory m) {
    long frsize = m.getLong(8);
    long blocks = m.getLong(16);
    long bfree = m.getLong(24);
    long bavail = m.getLong(32);
    long files = m.getLong(40);
    long ffree = m.getLong(48);
    long flag = m.getLong(72);
    return new FsUsage(blocks * frsize, bfree * frsize, bavail * frsize, files, ffree, (flag & ST_RDONLY) != 0);
  }

  public long usedBytes() {
    return sizeBytes - freeBytes;
  }
}
