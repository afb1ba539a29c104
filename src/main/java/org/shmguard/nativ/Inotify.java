package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An inotify instance through JNA: watches on directories, and the events read from it without
 * blocking. The daemon polls {@link #fd()} together with its other descriptors.
 *
 * <pre>{@code
 * try (Inotify in = Inotify.open()) {
 *   int wd = in.watch("/dev/shm", Inotify.SEGMENT_EVENTS);
 *   for (Inotify.Event e : in.drain()) { ... }
 * }
 * }</pre>
 */
public final class Inotify implements AutoCloseable {
  public static final int IN_MODIFY = 0x2;
  public static final int IN_CLOSE_WRITE = 0x8;
  public static final int IN_MOVED_FROM = 0x40;
  public static final int IN_MOVED_TO = 0x80;
  public static final int IN_CREATE = 0x100;
  public static final int IN_DELETE = 0x200;
  public static final int IN_DELETE_SELF = 0x400;
  public static final int IN_MOVE_SELF = 0x800;
  public static final int IN_UNMOUNT = 0x2000;
  public static final int IN_Q_OVERFLOW = 0x4000;
  public static final int IN_IGNORED = 0x8000;
  private static final int IN_ONLYDIR = 0x0100_0000;
  private static final int IN_DONT_FOLLOW = 0x0200_0000;
  // O_NONBLOCK and O_CLOEXEC: the same values on x86_64 and arm64.
  private static final int IN_NONBLOCK = 0x800;
  private static final int IN_CLOEXEC = 0x80000;
  private static final int EAGAIN = 11;

  /** What a segment's life looks like in its directory: created, filled, renamed, removed. */
  public static final int SEGMENT_EVENTS = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE
      | IN_DELETE_SELF | IN_MOVE_SELF;

  interface LibC extends Library {
    int inotify_init1(int flags) throws LastErrorException;

    int inotify_add_watch(int fd, byte[] path, int mask) throws LastErrorException;

    int inotify_rm_watch(int fd, int wd) throws LastErrorException;

    long read(int fd, Memory buf, long count) throws LastErrorException;

    int close(int fd) throws LastErrorException;
  }

  private static final class Lib {
    static final LibC C = Native.load("c", LibC.class);
  }

  /** One event: the watch it came from, the mask, and the name in the directory (may be empty). */
  public record Event(int wd, int mask, byte[] name) {
    public boolean is(int bits) {
      return (mask & bits) != 0;
    }
  }

  private final int fd;
  private final Memory buf = new Memory(64 * 1024);
  private boolean closed;

  private Inotify(int fd) {
    this.fd = fd;
  }

  public static Inotify open() throws IOException {
    try {
      return new Inotify(Lib.C.inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    } catch (LastErrorException e) {
      throw NativeErrors.io("inotify_init1", e);
    }
  }

  public int fd() {
    return fd;
  }

  /** Watches a directory (never through a symbolic link); returns the watch descriptor. */
  public int watch(String dir, int mask) throws IOException {
    try {
      return Lib.C.inotify_add_watch(fd, Linux.cString(dir), mask | IN_ONLYDIR | IN_DONT_FOLLOW);
    } catch (LastErrorException e) {
      throw NativeErrors.io("inotify_add_watch " + dir, e);
    }
  }

  /** Removes a watch; one the kernel already dropped (its mount went away) is not an error. */
  public void unwatch(int wd) {
    try {
      Lib.C.inotify_rm_watch(fd, wd);
    } catch (LastErrorException ignored) {
      // EINVAL: the kernel removed it already (IN_IGNORED was or will be queued).
    }
  }

  /** Every event queued now; an empty list when there are none. */
  public List<Event> drain() throws IOException {
    List<Event> events = new ArrayList<>();
    while (true) {
      long n;
      try {
        n = Lib.C.read(fd, buf, buf.size());
      } catch (LastErrorException e) {
        if (e.getErrorCode() == EAGAIN) {
          return events;
        }
        throw NativeErrors.io("read inotify", e);
      }
      if (n <= 0) {
        return events;
      }
      int off = 0;
      while (off < n) {
        // struct inotify_event { int wd; uint32_t mask; uint32_t cookie; uint32_t len; char name[]; }
        int wd = buf.getInt(off);
        int mask = buf.getInt(off + 4);
        int len = buf.getInt(off + 12);
        byte[] name = new byte[0];
        if (len > 0) {
          int end = 0;
          while (end < len && buf.getByte(off + 16 + end) != 0) {
            end++;
          }
          name = buf.getByteArray(off + 16, end);
        }
        events.add(new Event(wd, mask, name));
        off += 16 + len;
      }
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        Lib.C.close(fd);
      } catch (LastErrorException ignored) {
        // nothing to do about a failed close of a descriptor we are dropping
      }
    }
  }
}
