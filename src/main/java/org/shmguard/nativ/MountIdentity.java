package org.shmguard.nativ;

/**
 * What a handle is open on, as the kernel names it: the mount (its id, as mountinfo's first
 * field), the filesystem (device) and the inode, and whether the handle is that mount's root.
 */
public record MountIdentity(long mountId, int devMajor, int devMinor, long ino, boolean mountRoot, boolean directory) {

  /** Whether this is the root of mount {@code expectedId}, on device {@code major:minor}. */
  public boolean isRootOf(long expectedId, int major, int minor) {
    return mountId == expectedId && devMajor == major && devMinor == minor && mountRoot && directory;
  }
}
