package org.shmguard.nativ;

import java.io.IOException;

/**
 * An O_PATH handle on a mount's root: identity and capacity are read through the handle, and a
 * size change is applied to the superblock the handle is on, so a path that changes after the
 * check cannot redirect either.
 */
public final class MountHandle implements AutoCloseable {
  private final MountCalls calls;
  private final int fd;
  private final String path;
  private boolean closed;

  MountHandle(MountCalls calls, int fd, String path) {
    this.calls = calls;
    this.fd = fd;
    this.path = path;
  }

  /** The path this handle was opened from, for messages only. */
  public String path() {
    return path;
  }

  /** The mount, device and inode the handle is on. */
  public MountIdentity identity() throws IOException {
    return calls.identity(fd, path);
  }

  /**
   * The mount's id that the kernel never reuses (Linux 6.8 and later), or 0 where there is none:
   * what tells this mount from a later one that got the same device number and mount id.
   */
  public long uniqueMountId() throws IOException {
    return calls.uniqueMountId(fd, path);
  }

  /** Capacity of the filesystem the handle is on. */
  public FsUsage usage() throws IOException {
    return calls.fstatvfs(fd, path);
  }

  /** Sets size= of the handle's filesystem to {@code bytes}, and nothing else (see {@link MountCalls}). */
  public void reconfigureSize(long bytes) throws IOException {
    calls.reconfigureSize(fd, bytes, path);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      calls.close(fd);
    }
  }
}
