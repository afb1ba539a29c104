package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.channels.SocketChannel;

/**
 * The process on the other end of an accepted Unix socket, from the kernel: SO_PEERCRED (the pid,
 * uid and gid it recorded at connect, the pid as this process's PID namespace numbers it) and
 * SO_PEERPIDFD (a pidfd for that same process, Linux 6.5 and later), through getsockopt(2) on the
 * channel's descriptor; and the two checks a caller needs to use the pid safely: whether a pidfd's
 * process is still unreaped, and the boot-relative clock /proc/PID/stat's start time counts in.
 *
 * <p>The JDK gives no public way to a channel's descriptor; {@link #fd} reads the channel's
 * {@code fdVal} field through sun.misc.Unsafe (module jdk.unsupported, which needs no
 * --add-opens). If a JDK ever lacks the field, it throws, and the caller must treat the peer as
 * unknown.
 *
 * <pre>{@code
 * int fd = SocketPeer.fd(channel);
 * SocketPeer.Cred c = SocketPeer.cred(fd);
 * int pidfd = SocketPeer.pidfd(fd);   // ErrnoException ENOPROTOOPT before Linux 6.5
 * ...
 * boolean same = SocketPeer.unreaped(pidfd); Pidfd.close(pidfd);
 * }</pre>
 */
public final class SocketPeer {
  private static final int SOL_SOCKET = 1;
  private static final int SO_PEERCRED = 17;
  private static final int SO_PEERPIDFD = 77;
  private static final int CLOCK_BOOTTIME = 7;
  private static final int SC_CLK_TCK = 2;
  // The generic syscall table gives pidfd_send_signal the same number on x86_64 and arm64.
  private static final long SYS_PIDFD_SEND_SIGNAL = 424;
  /** No such option: a kernel before 6.5 for SO_PEERPIDFD. */
  public static final int ENOPROTOOPT = 92;

  interface LibC extends Library {
    int getsockopt(int fd, int level, int name, int[] value, int[] length) throws LastErrorException;

    long syscall(long number, long a, long b, long c, long d) throws LastErrorException;

    int clock_gettime(int clock, long[] timespec) throws LastErrorException;

    long sysconf(int name);
  }

  private static final class Lib {
    static final LibC C = Native.load("c", LibC.class);
  }

  /** What SO_PEERCRED says: the peer's pid (0 when the kernel could not name one), uid and gid. */
  public record Cred(int pid, int uid, int gid) {}

  private SocketPeer() {}

  /** The descriptor of an open socket channel. */
  public static int fd(SocketChannel channel) throws IOException {
    try {
      int fd = FdField.UNSAFE.getInt(channel, FdField.offset(channel.getClass()));
      if (fd < 0) {
        throw new IOException("the channel has no descriptor");
      }
      return fd;
    } catch (ReflectiveOperationException | RuntimeException | ExceptionInInitializerError e) {
      throw new IOException("cannot find the socket's descriptor in this JDK: " + e, e);
    }
  }

  /** Where the JDK's socket channel keeps its descriptor, looked up once. */
  private static final class FdField {
    static final sun.misc.Unsafe UNSAFE = unsafe();
    private static volatile Class<?> type;
    private static volatile long offset;

    static long offset(Class<?> c) throws ReflectiveOperationException {
      if (type != c) {
        Field fdVal = c.getDeclaredField("fdVal");
        @SuppressWarnings("deprecation") // the one way to the descriptor that needs no JVM option
        long o = UNSAFE.objectFieldOffset(fdVal);
        offset = o;
        type = c;
      }
      return offset;
    }

    private static sun.misc.Unsafe unsafe() {
      try {
        Field theUnsafe = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        return (sun.misc.Unsafe) theUnsafe.get(null);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("sun.misc.Unsafe is not reachable", e);
      }
    }
  }

  /** SO_PEERCRED of the connected socket {@code fd}. */
  public static Cred cred(int fd) throws IOException {
    int[] ucred = new int[3];
    int[] length = {12};
    try {
      Lib.C.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ucred, length);
    } catch (LastErrorException e) {
      throw NativeErrors.io("getsockopt SO_PEERCRED", e);
    }
    return new Cred(ucred[0], ucred[1], ucred[2]);
  }

  /**
   * A pidfd for the process that connected {@code fd} (the same process SO_PEERCRED names), which
   * the caller closes with {@link Pidfd#close}. ErrnoException ENOPROTOOPT before Linux 6.5;
   * ESRCH if that process is gone.
   */
  public static int pidfd(int fd) throws IOException {
    int[] pidfd = {-1};
    int[] length = {4};
    try {
      Lib.C.getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, pidfd, length);
    } catch (LastErrorException e) {
      throw NativeErrors.io("getsockopt SO_PEERPIDFD", e);
    }
    return pidfd[0];
  }

  /**
   * Whether the pidfd's process has not been reaped yet (signal 0 through pidfd_send_signal, Linux
   * 5.1): while it has not, its pid is still its own and no other process's.
   */
  public static boolean unreaped(int pidfd) {
    try {
      Lib.C.syscall(SYS_PIDFD_SEND_SIGNAL, pidfd, 0, 0, 0);
      return true;
    } catch (LastErrorException e) {
      return false;
    }
  }

  /** The time since boot (CLOCK_BOOTTIME) in the clock ticks of /proc/PID/stat's start time, rounded down. */
  public static long bootTicks() throws IOException {
    long[] ts = new long[2];
    try {
      Lib.C.clock_gettime(CLOCK_BOOTTIME, ts);
    } catch (LastErrorException e) {
      throw NativeErrors.io("clock_gettime CLOCK_BOOTTIME", e);
    }
    long hz = Lib.C.sysconf(SC_CLK_TCK);
    if (hz <= 0) {
      throw new IOException("sysconf(_SC_CLK_TCK) gave " + hz);
    }
    return ts[0] * hz + ts[1] / (1_000_000_000L / hz);
  }
}
