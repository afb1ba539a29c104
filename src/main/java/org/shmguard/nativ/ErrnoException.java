package org.shmguard.nativ;

import java.io.IOException;

/** A failed system call whose errno has no closer JDK exception type. */
public final class ErrnoException extends IOException {
  private static final int EAGAIN = 11;
  private static final int ELOOP = 40;
  private final int errno;

  public ErrnoException(String message, int errno) {
    super(message);
    this.errno = errno;
  }

  public int errno() {
    return errno;
  }

  /** EAGAIN (EWOULDBLOCK): a non-blocking call would have had to wait. */
  public boolean wouldBlock() {
    return errno == EAGAIN;
  }

  /** ELOOP: O_NOFOLLOW met a symbolic link. */
  public boolean isLink() {
    return errno == ELOOP;
  }
}
