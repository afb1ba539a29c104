package org.shmguard.nativ;

import java.io.IOException;

/** A failed system call whose errno has no closer JDK exception type. */
public final class ErrnoException extends IOException {
  private final int errno;

  public ErrnoException(String message, int errno) {
    super(message);
    this.errno = errno;
  }

  public int errno() {
    return errno;
  }
}
