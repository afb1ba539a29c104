package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.shmguard.text.Names;

/**
 * statx(2) relative to a directory handle, through JNA's direct mapping, for the one call made once
 * per file of every mount on every scan. JNA's interface mapping costs a proxy, a reflective
 * dispatch and a native allocation per call, several times the system call itself on tmpfs;
 * a direct-mapped static native method with a byte array for the struct costs little more than the
 * call. Measured by the bench (docs/performance.md): segment listing of 3,667 files from 12.6 ms to
 * a few milliseconds.
 */
final class DirectStatx {
  private static final int AT_SYMLINK_NOFOLLOW = 0x100;
  private static final int STATX_BASIC_STATS = 0x7ff;

  static {
    Native.register(DirectStatx.class, NativeLibrary.getInstance("c"));
  }

  private DirectStatx() {}

  private static native int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) throws LastErrorException;

  private static native int statx(int dirfd, Pointer path, int flags, int mask, Pointer buf) throws LastErrorException;

  /**
   * Native memory for the name and the struct, one pair per thread that lists: a byte[] argument
   * costs JNA a malloc, a copy in and a copy out on every call (3,667 files a pass in the bench).
   */
  private static final class Buffers {
    /** A name is at most NAME_MAX (255) bytes and its NUL. */
    final Memory name = new Memory(256);
    final Memory struct = new Memory(StatxResult.SIZE);
    final ByteBuffer view = struct.getByteBuffer(0, StatxResult.SIZE).order(ByteOrder.nativeOrder());
  }

  private static final ThreadLocal<Buffers> BUFFERS = ThreadLocal.withInitial(Buffers::new);

  private static final int AT_EMPTY_PATH = 0x1000;
  private static final byte[] EMPTY = {0};

  /** statx of an open descriptor itself (AT_EMPTY_PATH): the reaper's check on the file it opened. */
  static StatxResult fstat(int fd) throws IOException {
    byte[] buf = new byte[StatxResult.SIZE];
    try {
      statx(fd, EMPTY, AT_EMPTY_PATH, STATX_BASIC_STATS, buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx of an open file", e);
    }
    return StatxResult.read(ByteBuffer.wrap(buf).order(ByteOrder.nativeOrder()));
  }

  /**
   * statx reporting failure by its return value (errno from {@link Native#getLastError}): where a
   * missing name is the usual answer, the two exceptions per call of the throwing binding cost
   * several times the call.
   */
  private static final class Quiet {
    static {
      Native.register(Quiet.class, NativeLibrary.getInstance("c"));
    }

    private Quiet() {}

    static native int statx(int dirfd, Pointer path, int flags, int mask, Pointer buf);
  }

  /** {@link #lstatAt}, or null where there is no such entry (ENOENT), without an exception for that. */
  static StatxResult lstatAtIfAny(int dirfd, byte[] name) throws IOException {
    if (name.length > 255) {
      throw new IOException("statx " + Names.display(name) + ": the name is longer than any file name can be");
    }
    Buffers b = BUFFERS.get();
    b.name.write(0, name, 0, name.length);
    b.name.setByte(name.length, (byte) 0);
    if (Quiet.statx(dirfd, b.name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, b.struct) != 0) {
      int errno = Native.getLastError();
      if (errno == NativeErrors.ENOENT) {
        return null;
      }
      throw NativeErrors.io("statx " + Names.display(name), errno);
    }
    return StatxResult.read(b.view);
  }

  /** lstat of {@code name} (raw bytes, no terminating NUL) in the directory {@code dirfd}. */
  static StatxResult lstatAt(int dirfd, byte[] name) throws IOException {
    if (name.length > 255) {
      throw new IOException("statx " + Names.display(name) + ": the name is longer than any file name can be");
    }
    Buffers b = BUFFERS.get();
    b.name.write(0, name, 0, name.length);
    b.name.setByte(name.length, (byte) 0);
    try {
      statx(dirfd, b.name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | StatxResult.STATX_BTIME, b.struct);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx " + Names.display(name), e);
    }
    return StatxResult.read(b.view);
  }
}
