package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/** Turns errno into the JDK's exception types, so callers handle "gone" and "denied" as the JDK does. */
final class NativeErrors {
  static final int EPERM = 1;
  static final int ENOENT = 2;
  static final int ESRCH = 3;
  static final int EAGAIN = 11;
  static final int EACCES = 13;
  static final int EBUSY = 16;
  static final int EEXIST = 17;

  private NativeErrors() {}

  static IOException io(String what, LastErrorException e) {
    return io(what, e.getErrorCode());
  }

  static IOException io(String what, int errno) {
    String message = what + ": " + Errno.describe(errno);
    return switch (errno) {
      case ENOENT, ESRCH -> new NoSuchFileException(message);
      case EACCES, EPERM -> new AccessDeniedException(message);
      case EEXIST -> new FileAlreadyExistsException(message);
      default -> new ErrnoException(message, errno);
    };
  }
}
