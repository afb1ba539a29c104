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
  private static final short POLLIN = 0x1;

  interface LibC extends Library {
    long syscall(long number, long pid, long flags) throws LastErrorException;

    int poll(com.sun.jna.Pointer fds, long nfds, int timeout) throws LastErrorException;

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
   * Whether the process of pidfd {@code fd} is still running: its pidfd is not readable yet (it
   * becomes readable when the process exits, and names that process even after its pid is
   * reused). A poll without waiting; no permission over the process is needed, unlike a signal.
   */
  public static boolean alive(int fd) throws IOException {
    com.sun.jna.Memory pollfd = new com.sun.jna.Memory(8); // struct pollfd { int fd; short events; short revents; }
    pollfd.setInt(0, fd);
    pollfd.setShort(4, POLLIN);
    pollfd.setShort(6, (short) 0);
    try {
      Lib.C.poll(pollfd, 1, 0);
    } catch (LastErrorException e) {
      throw NativeErrors.io("poll of a pidfd", e);
    }
    return (pollfd.getShort(6) & POLLIN) == 0;
  }

  public static void close(int fd) {
    try {
      Lib.C.close(fd);
    } catch (LastErrorException ignored) {
      // a pidfd we are dropping: a failed close changes nothing we could act on
    }
  }
}
