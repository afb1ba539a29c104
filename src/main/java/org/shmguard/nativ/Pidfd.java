package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;

/**
 * pidfd_open(2) through JNA: a descriptor that becomes readable when its process exits, so the
 * daemon learns of a holder's death the moment it happens (Linux 5.3 and later).
 *
 * <pre>{@code
 * int fd = Pidfd.open(pid);   // poll it for POLLIN, then Pidfd.close(fd)
 * }</pre>
 */
public final class Pidfd {
  // The generic syscall table gives pidfd_open the same number on x86_64 and arm64.
  private static final long SYS_PIDFD_OPEN = 434;
  private static final long SYS_PIDFD_SEND_SIGNAL = 424;
  private static final int ESRCH = 3;

  interface LibC extends Library {
    long syscall(long number, long pid, long flags) throws LastErrorException;

    long syscall(long number, long pidfd, long sig, com.sun.jna.Pointer info, long flags) throws LastErrorException;

    int close(int fd) throws LastErrorException;
  }

  private static final class Lib {
    static final LibC C = Native.load("c", LibC.class);
  }

  private Pidfd() {}

  /**
   * A pidfd for {@code pid}. Throws NoSuchFileException when the process is gone already, and
   * ErrnoException (ENOSYS) on kernels older than 5.3.
   */
  public static int open(int pid) throws IOException {
    try {
      return (int) Lib.C.syscall(SYS_PIDFD_OPEN, pid, 0);
    } catch (LastErrorException e) {
      throw NativeErrors.io("pidfd_open " + pid, e);
    }
  }

  /**
   * Whether the process of pidfd {@code fd} is still running (signal 0 through the pidfd, which
   * names that process even after its pid is reused): false once it has exited.
   */
  public static boolean alive(int fd) throws IOException {
    try {
      Lib.C.syscall(SYS_PIDFD_SEND_SIGNAL, fd, 0, null, 0);
      return true;
    } catch (LastErrorException e) {
      if (e.getErrorCode() == ESRCH) {
        return false;
      }
      throw NativeErrors.io("pidfd_send_signal", e);
    }
  }

  public static void close(int fd) {
    try {
      Lib.C.close(fd);
    } catch (LastErrorException ignored) {
      // a pidfd we are dropping: a failed close changes nothing we could act on
    }
  }
}
