package org.shmguard.model;

/** What identifies a file whatever its path: device and inode. Holders are matched by this, never by name. */
public record FileKey(Dev dev, long ino) {
  public FileKey {
    if (dev == null) {
      throw new IllegalArgumentException("dev is required");
    }
  }

  @Override
  public String toString() {
    return dev + "/" + ino;
  }
}
