package org.shmguard.model;

import java.util.Objects;

/**
 * One of the largest regular files in a mount's root, whatever its name: what a listing keeps of
 * the files it otherwise only counts, so that an alert can name what fills a mount.
 *
 * @param name the name as it is displayed ({@link org.shmguard.text.Names#display})
 * @param ino its inode: with the mount's device, the key its holders are found by
 * @param allocatedBytes st_blocks * 512
 * @param uid its owner
 */
public record LargeFile(String name, long ino, long allocatedBytes, int uid) {
  public LargeFile {
    Objects.requireNonNull(name, "name");
    if (allocatedBytes < 0) {
      throw new IllegalArgumentException("allocatedBytes is not negative: " + allocatedBytes);
    }
  }

  public FileKey key(Dev dev) {
    return new FileKey(dev, ino);
  }
}
