package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.shmguard.text.Names;

/**
 * The Linux calls the JDK lacks, through JNA: directory handles, statx, getdents64, unlinkat,
 * renameat2, file leases (fcntl) and statvfs. Nothing else in shmguard talks to libc through JNA.
 *
 * <pre>{@code
 * try (DirHandle dir = Linux.get().openDirectory("/dev/shm")) {
 *   dir.forEachName(name -> { ... });
 * }
 * }</pre>
 */
public final class Linux {
  private static final int AT_FDCWD = -100;
  private static final int AT_SYMLINK_NOFOLLOW = 0x100;
  private static final int AT_EMPTY_PATH = 0x1000;
  private static final int STATX_BASIC_STATS = 0x7ff;
  private static final int O_RDONLY = 0;
  private static final int O_CLOEXEC = 0x80000;
  // These two differ between x86 and the arm64 generic ABI.
  private static final int O_DIRECTORY = Platform.isARM() ? 0x4000 : 0x10000;
  private static final int O_NOFOLLOW = Platform.isARM() ? 0x8000 : 0x20000;
  private static final int O_NOCTTY = 0x100;
  private static final int O_NONBLOCK = 0x800;
  private static final int RENAME_NOREPLACE = 1;
  private static final int RENAME_EXCHANGE = 2;
  static final int F_SETSIG = 10;
  static final int F_SETLEASE = 1024;
  static final int F_GETLEASE = 1025;
  static final int F_WRLCK = 1;
  static final int F_UNLCK = 2;
  /** Default action: ignore. The JVM installs no handler for it (see {@link OpenFile#tryWriteLease()}). */
  static final int SIGURG = 23;

  /** Raw libc entry points; every call reports failure by throwing LastErrorException. */
  interface LibC extends Library {
    int open(byte[] path, int flags) throws LastErrorException;

    int close(int fd) throws LastErrorException;

    int statx(int dirfd, byte[] path, int flags, int mask, Memory buf) throws LastErrorException;

    int unlinkat(int dirfd, byte[] name, int flags) throws LastErrorException;

    long getdents64(int fd, Memory buf, long size) throws LastErrorException;

    long lseek(int fd, long offset, int whence) throws LastErrorException;

    int statvfs(byte[] path, Memory buf) throws LastErrorException;
  }

  private static final class Holder {
    static final Linux INSTANCE = new Linux(Native.load("c", LibC.class));
  }

  private final LibC libc;

  private Linux(LibC libc) {
    this.libc = libc;
  }

  /** The process-wide binding, loaded on first use. */
  public static Linux get() {
    return Holder.INSTANCE;
  }

  static byte[] cString(byte[] bytes) {
    return Arrays.copyOf(bytes, bytes.length + 1);
  }

  static byte[] cString(String s) {
    return cString(s.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Opens a directory without following a symbolic link in its last component. The returned
   * handle is the only way shmguard reads or unlinks segments, so a mount that is swapped for
   * another directory after the check cannot redirect an unlink.
   */
  public DirHandle openDirectory(String path) throws IOException {
    try {
      int fd = libc.open(cString(path), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      return new DirHandle(this, fd, path);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + path, e);
    }
  }

  /** statx of a path, following links (the JDK's stat loses device minors above 255 in no way, but lacks blocks). */
  public StatxResult stat(String path) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    try {
      libc.statx(AT_FDCWD, cString(path), 0, STATX_BASIC_STATS, buf);
      return StatxResult.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx " + path, e);
    }
  }

  /** Capacity of the filesystem that holds {@code path}, from statvfs(3). */
  public FsUsage statvfs(String path) throws IOException {
    Memory buf = new Memory(FsUsage.STRUCT_SIZE);
    buf.clear();
    try {
      libc.statvfs(cString(path), buf);
      return FsUsage.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statvfs " + path, e);
    }
  }

  StatxResult fstatat(int dirfd, byte[] name) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    try {
      libc.statx(dirfd, cString(name), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, buf);
      return StatxResult.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx " + Names.display(name), e);
    }
  }

  StatxResult fstat(int fd) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    try {
      libc.statx(fd, new byte[] {0}, AT_EMPTY_PATH, STATX_BASIC_STATS, buf);
      return StatxResult.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx of an open descriptor", e);
    }
  }

  void unlinkat(int dirfd, byte[] name) throws IOException {
    try {
      DirectFileCalls.unlinkat(dirfd, cString(name), 0);
    } catch (LastErrorException e) {
      throw NativeErrors.io("unlinkat " + Names.display(name), e);
    }
  }

  /**
   * Opens an entry of a directory for reading, without following a link, without blocking (a FIFO
   * opens at once; a file under someone else's lease fails with EWOULDBLOCK instead of waiting for
   * the lease to break), and without becoming a controlling terminal.
   */
  OpenFile openAt(int dirfd, byte[] name) throws IOException {
    try {
      int fd = DirectFileCalls.openat(dirfd, cString(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      return new OpenFile(this, fd);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + Names.display(name), e);
    }
  }

  /** renameat2(2) with RENAME_NOREPLACE within one directory: fails with EEXIST instead of replacing. */
  void renameNoReplace(int dirfd, byte[] from, byte[] to) throws IOException {
    try {
      DirectFileCalls.renameat2(dirfd, cString(from), dirfd, cString(to), RENAME_NOREPLACE);
    } catch (LastErrorException e) {
      throw NativeErrors.io("rename " + Names.display(from) + " to " + Names.display(to), e);
    }
  }

  /** renameat2(2) with RENAME_EXCHANGE within one directory: swaps two names atomically; ENOENT if either is missing. */
  void renameExchange(int dirfd, byte[] a, byte[] b) throws IOException {
    try {
      DirectFileCalls.renameat2(dirfd, cString(a), dirfd, cString(b), RENAME_EXCHANGE);
    } catch (LastErrorException e) {
      throw NativeErrors.io("exchange " + Names.display(a) + " and " + Names.display(b), e);
    }
  }

  /** fcntl(2) with an int argument; the result, or the errno as an exception. */
  int fcntl(int fd, int cmd, int arg, String what) throws IOException {
    try {
      return DirectFileCalls.fcntl(fd, cmd, arg);
    } catch (LastErrorException e) {
      throw NativeErrors.io(what, e);
    }
  }

  /**
   * Hands every entry name but . and .. to {@code each}, one getdents64 buffer at a time: memory
   * stays the same whatever the directory holds (a million names are never in one list).
   */
  void forEachName(int fd, java.util.function.Consumer<byte[]> each) throws IOException {
    Memory buf = new Memory(32 * 1024);
    // The records are copied out in one call and parsed in Java: reading the native buffer a byte
    // at a time (one JNI call each) cost more than the getdents64 itself on a mount of many files.
    byte[] records = new byte[(int) buf.size()];
    ByteBuffer view = ByteBuffer.wrap(records).order(ByteOrder.nativeOrder());
    try {
      libc.lseek(fd, 0, 0);
      while (true) {
        int n = (int) libc.getdents64(fd, buf, buf.size());
        if (n <= 0) {
          return;
        }
        buf.read(0, records, 0, n);
        int off = 0;
        while (off < n) {
          // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
          int reclen = Short.toUnsignedInt(view.getShort(off + 16));
          byte[] name = readName(records, off + 19, off + reclen);
          if (!isDotOrDotDot(name)) {
            each.accept(name);
          }
          off += reclen;
        }
      }
    } catch (LastErrorException e) {
      throw NativeErrors.io("getdents64", e);
    }
  }

  private static byte[] readName(byte[] records, int start, int limit) {
    int end = start;
    while (end < limit && records[end] != 0) {
      end++;
    }
    return Arrays.copyOfRange(records, start, end);
  }

  private static boolean isDotOrDotDot(byte[] name) {
    return (name.length == 1 && name[0] == '.') || (name.length == 2 && name[0] == '.' && name[1] == '.');
  }

  void close(int fd) {
    try {
      libc.close(fd);
    } catch (LastErrorException ignored) {
      // close(2) errors on a read-only directory handle carry no information we could act on.
    }
  }
}
