package org.shmguard.advice;

import java.io.IOException;

/**
 * Another shmguard already answers on the advice socket's path. Not a fault to work around: two
 * daemons would reap, alert and remount the same mounts, so the second one does not start.
 */
public final class SocketInUseException extends IOException {
  private static final long serialVersionUID = 1L;

  public SocketInUseException(String message) {
    super(message);
  }
}
