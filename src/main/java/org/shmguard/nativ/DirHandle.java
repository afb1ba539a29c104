package org.shmguard.nativ;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * An open directory: lists raw names, lstat's, opens, renames and unlinks entries relative to itself, so every
 * operation stays in the filesystem the handle was opened on, whatever happens to the path.
 */
public final class DirHandle implements AutoCloseable {
  private final Linux linux;
  private final int fd;
  private final String path;
  private boolean closed;

  DirHandle(Linux linux, int fd, String path) {
    this.linux = linux;
    this.fd = fd;
    this.path = path;
  }

  /** The path this handle was opened from, for messages only. */
  public String path() {
    return path;
  }

  /** Identity of the directory itself: its device tells which filesystem the handle is on. */
  public StatxResult self() throws IOException {
    return linux.fstat(fd);
  }

  /** The mount, device and inode of the directory itself, and whether it is that mount's root. */
  public MountIdentity identity() throws IOException {
    return MountCalls.get().identity(fd, path);
  }

  /**
   * Every entry name except . and .., as raw bytes (names need not be UTF-8), handed over one at
   * a time: the directory may hold millions, and none of them is kept here.
   */
  public void forEachName(Consumer<byte[]> each) throws IOException {
    linux.forEachName(fd, each);
  }

  /** lstat of one entry: a symbolic link is reported as a link, never followed. */
  public StatxResult lstat(byte[] name) throws IOException {
    return DirectStatx.lstatAt(fd, name); // called per file per scan: the fast binding
  }

  /** lstat of one entry, or null if there is none: for a name that is usually missing (no exception then). */
  public StatxResult lstatIfAny(byte[] name) throws IOException {
    return DirectStatx.lstatAtIfAny(fd, name);
  }

  /** Opens one entry for reading, as {@link Linux#openAt} says: never following a link, never blocking. */
  public OpenFile open(byte[] name) throws IOException {
    return linux.openAt(fd, name);
  }

  /** Renames one entry within this directory; fails (EEXIST, a FileAlreadyExistsException) rather than replace {@code to}. */
  public void renameNoReplace(byte[] from, byte[] to) throws IOException {
    linux.renameNoReplace(fd, from, to);
  }

  /**
   * Swaps two entries of this directory in one step (RENAME_EXCHANGE): each name then leads to the
   * file the other led to, and neither is free at any moment. NoSuchFileException if either is missing.
   */
  public void renameExchange(byte[] a, byte[] b) throws IOException {
    linux.renameExchange(fd, a, b);
  }

  /** Removes one entry of this directory. */
  public void unlink(byte[] name) throws IOException {
    linux.unlinkat(fd, name);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      linux.close(fd);
    }
  }
}
