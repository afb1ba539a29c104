package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.io.IOException;
import java.util.BitSet;

/**
 * poll(2) over a set of descriptors plus an eventfd that other threads use to wake the poller.
 * This is how the daemon's one worker thread waits for inotify, holder exits and requests at once.
 *
 * <pre>{@code
 * try (Poll poll = Poll.create()) {
 *   BitSet ready = poll.await(new int[] {inotifyFd, pidfd}, 1000);   // another thread: poll.wake()
 * }
 * }</pre>
 */
public final class Poll implements AutoCloseable {
  private static final short POLLIN = 0x1;
  private static final int EFD_NONBLOCK = 0x800;
  private static final int EFD_CLOEXEC = 0x80000;
  private static final int EINTR = 4;

  interface LibC extends Library {
    int poll(Memory fds, long nfds, int timeout) throws LastErrorException;

    int eventfd(int initval, int flags) throws LastErrorException;

    long read(int fd, Memory buf, long count) throws LastErrorException;

    long write(int fd, Memory buf, long count) throws LastErrorException;

    int close(int fd) throws LastErrorException;
  }

  private static final class Lib {
    static final LibC C = Native.load("c", LibC.class);
  }

  private final int wakeFd;
  private final Memory one = new Memory(8);
  private volatile boolean closed;

  private Poll(int wakeFd) {
    this.wakeFd = wakeFd;
  }

  public static Poll create() throws IOException {
    try {
      return new Poll(Lib.C.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    } catch (LastErrorException e) {
      throw NativeErrors.io("eventfd", e);
    }
  }

  /**
   * Waits until one of {@code fds} is readable, {@link #wake()} is called, or {@code timeoutMs}
   * passes (-1: no limit). Returns the indexes into {@code fds} that are readable, or have hung
   * up or failed, which the caller learns about when it reads them.
   */
  public BitSet await(int[] fds, int timeoutMs) throws IOException {
    int n = fds.length + 1;
    Memory set = new Memory(8L * n);
    set.clear();
    for (int i = 0; i < n; i++) {
      // struct pollfd { int fd; short events; short revents; }
      set.setInt(8L * i, i < fds.length ? fds[i] : wakeFd);
      set.setShort(8L * i + 4, POLLIN);
    }
    try {
      Lib.C.poll(set, n, timeoutMs);
    } catch (LastErrorException e) {
      if (e.getErrorCode() == EINTR) {
        return new BitSet();
      }
      throw NativeErrors.io("poll", e);
    }
    BitSet ready = new BitSet(fds.length);
    for (int i = 0; i < fds.length; i++) {
      if (set.getShort(8L * i + 6) != 0) {
        ready.set(i);
      }
    }
    if (set.getShort(8L * fds.length + 6) != 0) {
      drainWake();
    }
    return ready;
  }

  /**
   * Which of {@code fds} are readable (or have hung up or failed) right now, without waiting and
   * without this poller's wake: a look at pidfds from another thread than the one that waits.
   */
  public static BitSet readyNow(int[] fds) throws IOException {
    BitSet ready = new BitSet(fds.length);
    if (fds.length == 0) {
      return ready;
    }
    Memory set = new Memory(8L * fds.length);
    set.clear();
    for (int i = 0; i < fds.length; i++) {
      set.setInt(8L * i, fds[i]);
      set.setShort(8L * i + 4, POLLIN);
    }
    try {
      Lib.C.poll(set, fds.length, 0);
    } catch (LastErrorException e) {
      if (e.getErrorCode() == EINTR) {
        return ready;
      }
      throw NativeErrors.io("poll", e);
    }
    for (int i = 0; i < fds.length; i++) {
      if (set.getShort(8L * i + 6) != 0) {
        ready.set(i);
      }
    }
    return ready;
  }

  /** Makes a current or the next {@link #await} return at once; safe from any thread. */
  public void wake() {
    if (closed) {
      return;
    }
    Memory v = new Memory(8);
    v.setLong(0, 1);
    try {
      Lib.C.write(wakeFd, v, 8);
    } catch (LastErrorException ignored) {
      // EAGAIN: the counter is already non-zero, so the poller wakes anyway
    }
  }

  private void drainWake() {
    try {
      Lib.C.read(wakeFd, one, 8);
    } catch (LastErrorException ignored) {
      // EAGAIN: another wake was drained first
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      try {
        Lib.C.close(wakeFd);
      } catch (LastErrorException ignored) {
        // dropping it
      }
    }
  }
}
