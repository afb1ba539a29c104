package org.shmguard.nativ;

import java.io.IOException;

/**
 * A file shmguard opened read-only (through {@link DirHandle#open}) to take a write lease on it:
 * the kernel's own answer to "does anything else have this file open?".
 *
 * <pre>{@code
 * try (OpenFile f = dir.open(name)) {
 *   if (f.tryWriteLease()) { ...; if (f.writeLeaseIntact()) { ... } f.releaseLease(); }
 * }
 * }</pre>
 *
 * <p>fcntl(2) F_SETLEASE F_WRLCK is granted only while no other open file description of the inode
 * exists anywhere: another fd in any process, a shared mapping whose fd was closed, an fd in flight
 * in a Unix socket (SCM_RIGHTS), a file registered in an io_uring. While the lease is held, an open
 * of the inode by any process first breaks it: the opener waits (up to fs.lease-break-time) and
 * F_GETLEASE here reports the pending break. Closing the descriptor releases the lease too.
 */
public final class OpenFile implements AutoCloseable {
  private final Linux linux;
  private final int fd;
  private boolean leased;
  private boolean closed;

  OpenFile(Linux linux, int fd) {
    this.linux = linux;
    this.fd = fd;
  }

  /** statx of the open file itself: what the descriptor refers to, whatever its name now leads to. */
  public StatxResult stat() throws IOException {
    return DirectStatx.fstat(fd);
  }

  /**
   * Takes a write lease: true when granted; false when something else has the file open (EAGAIN,
   * or EBUSY). Any other failure (EINVAL with fs.leases-enable=0 or a filesystem without leases,
   * EACCES without CAP_LEASE on another user's file, ENOLCK) is a {@link LeaseUnavailableException}.
   *
   * <p>A lease break is announced by a signal to the lease holder, SIGIO unless F_SETSIG says
   * otherwise, and SIGIO's default action ends the process: the JVM installs no handler for it.
   * So the break signal is set to SIGURG first, whose default action is to ignore it; the break is
   * read with {@link #writeLeaseIntact()} instead.
   */
  public boolean tryWriteLease() throws IOException {
    linux.fcntl(fd, Linux.F_SETSIG, Linux.SIGURG, "fcntl F_SETSIG");
    try {
      linux.fcntl(fd, Linux.F_SETLEASE, Linux.F_WRLCK, "fcntl F_SETLEASE F_WRLCK");
    } catch (ErrnoException e) {
      if (e.errno() == NativeErrors.EAGAIN || e.errno() == NativeErrors.EBUSY) {
        return false;
      }
      throw new LeaseUnavailableException(e.getMessage(), e);
    } catch (IOException e) {
      throw new LeaseUnavailableException(e.getMessage(), e); // EACCES, EPERM
    }
    leased = true;
    return true;
  }

  /**
   * True while the write lease is held and no break is pending. False once any process has begun
   * an open of the inode (F_GETLEASE then reports what the lease must become: F_RDLCK for a reader,
   * F_UNLCK for a writer) or the lease is gone.
   */
  public boolean writeLeaseIntact() throws IOException {
    return leased && linux.fcntl(fd, Linux.F_GETLEASE, 0, "fcntl F_GETLEASE") == Linux.F_WRLCK;
  }

  /**
   * Gives the lease up, letting a waiting opener go on; harmless when none is held. A failure is
   * ignored: {@link #close()} drops the lease in any case.
   */
  public void releaseLease() {
    if (leased) {
      leased = false;
      try {
        linux.fcntl(fd, Linux.F_SETLEASE, Linux.F_UNLCK, "fcntl F_SETLEASE F_UNLCK");
      } catch (IOException ignored) {
        // close() follows and releases it
      }
    }
  }

  /** Closes the descriptor, which also drops a lease still held. */
  @Override
  public void close() {
    if (!closed) {
      closed = true;
      leased = false;
      try {
        DirectFileCalls.close(fd);
      } catch (com.sun.jna.LastErrorException ignored) {
        // a read-only descriptor: nothing was written that close could fail to flush
      }
    }
  }
}
