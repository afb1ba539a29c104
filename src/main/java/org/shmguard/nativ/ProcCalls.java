package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The system calls of a /proc pass (openat, read, getdents64, statx, readlinkat, kcmp) through
 * JNA's direct mapping, relative to one handle on /proc and with buffers reused for the whole pass.
 *
 * <p>Why: a JFR profile of the warm scan (docs/performance.md) found most of a scan in these
 * system calls, and around them, as shmguard's own cost, a FileInputStream, Path objects and
 * strings per process and per fd, and jnr-posix's per-call marshalling of a path String for each
 * fd's stat. Here a pass allocates nothing per process or per fd that does not hold a watched file.
 *
 * <p>Every call answers an errno as a negative number instead of throwing, since "the process
 * exited while we looked" (ENOENT, ESRCH) is normal on /proc and the caller decides what each
 * errno means for the pass. Not thread-safe: one instance per pass (or per lock holder).
 *
 * <pre>{@code
 * try (ProcCalls proc = ProcCalls.open("/proc")) {
 *   int n = proc.readFile(42, "maps");   // bytes in proc.bytes(), or -errno
 * }
 * }</pre>
 */
public final class ProcCalls implements AutoCloseable {
  public static final int EPERM = 1;
  public static final int ENOENT = 2;
  public static final int ESRCH = 3;
  public static final int EACCES = 13;

  private static final int AT_FDCWD = -100;
  private static final int O_RDONLY = 0;
  private static final int O_CLOEXEC = 0x80000;
  private static final int O_DIRECTORY = Platform.isARM() ? 0x4000 : 0x10000;
  /** dev and ino are always filled; the size is asked for; nothing else is needed. */
  private static final int STATX_INO_SIZE = 0x100 | 0x200;
  private static final int STATX_NLINK = 0x4;
  /** Take the attributes the kernel has cached; never ask a (network, FUSE) server. */
  private static final int AT_STATX_DONT_SYNC = 0x4000;
  /** kcmp(2): x86_64 has its own number, arm64 the generic table's. */
  private static final long SYS_KCMP = Platform.isARM() ? 272 : 312;
  private static final int KCMP_FILES = 2;
  private static final long SYS_MEMFD_CREATE = Platform.isARM() ? 279 : 319;
  private static final int MFD_CLOEXEC = 1;
  private static final int AT_EMPTY_PATH = 0x1000;
  public static final int ENOSYS = 38;
  private static final int ENAMETOOLONG = 36;
  /** A line longer than {@link #MAX_LINE}: no /proc file this reads by lines writes one. */
  public static final int E2BIG = 7;
  /**
   * The longest line {@link #readLines} accepts: a maps line is at most a path (PATH_MAX) and
   * about 100 bytes more, a mountinfo line two paths and the mount data (a page each) and fields.
   */
  public static final int MAX_LINE = 256 * 1024;
  private static final int PATH_MAX = 4096;

  static {
    Native.register(ProcCalls.class, NativeLibrary.getInstance("c"));
  }

  private static native int openat(int dirfd, byte[] path, int flags) throws LastErrorException;

  // The same calls with native memory: a byte[] argument costs JNA a malloc, a copy in and a copy
  // out per call (4 KiB each way for a link buffer), and a pass makes about 12,000 of these calls.
  private static native int openat(int dirfd, Pointer path, int flags) throws LastErrorException;

  private static native int statx(int dirfd, Pointer path, int flags, int mask, Pointer buf) throws LastErrorException;

  private static native long readlinkat(int dirfd, Pointer path, Pointer buf, long size) throws LastErrorException;

  private static native long read(int fd, Pointer buf, long count) throws LastErrorException;

  private static native long getdents64(int fd, Pointer buf, long size) throws LastErrorException;

  private static native int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) throws LastErrorException;

  private static native int close(int fd) throws LastErrorException;

  private static native long syscall(long number, long a, long b, long c, long d, long e) throws LastErrorException;

  private final int procFd;
  private final Memory nativeBuf = new Memory(64 * 1024);
  private byte[] bytes = new byte[64 * 1024];
  private final byte[] dents = new byte[32 * 1024];
  private final ByteBuffer dentsView = ByteBuffer.wrap(dents).order(ByteOrder.nativeOrder());
  private final byte[] statx = new byte[StatxResult.SIZE];
  private final ByteBuffer statxView = ByteBuffer.wrap(statx).order(ByteOrder.nativeOrder());
  private final byte[] link = new byte[4096];
  private final Memory linkMem = new Memory(4096);
  private final Memory statxMem = new Memory(StatxResult.SIZE);
  /** The path of the next call, NUL-terminated: every path here is a short one relative to /proc. */
  private final Memory pathMem = new Memory(PATH_MAX);
  private final byte[] name = new byte[64];
  private int linkLength;
  private int lastErrno;

  private ProcCalls(int procFd) {
    this.procFd = procFd;
  }

  /** A handle on the /proc at {@code path}, for one pass. */
  public static ProcCalls open(String path) throws java.io.IOException {
    try {
      return new ProcCalls(openat(AT_FDCWD, Linux.cString(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + path, e);
    }
  }

  /** The numeric entries of /proc (the pids), ascending. */
  public int[] pids() throws java.io.IOException {
    try {
      return numbers(procFd);
    } catch (LastErrorException e) {
      throw NativeErrors.io("getdents64 of /proc", e);
    }
  }

  /**
   * The thread ids listed in /proc/PID/task, ascending.
   *
   * @return the ids, or null with {@link #lastErrno()} set if the directory could not be read
   */
  public int[] tids(int pid) {
    int dir = openAt(relative(pid, "task"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
      lastErrno = -dir;
      return null;
    }
    try {
      return numbers(dir);
    } catch (LastErrorException e) {
      lastErrno = e.getErrorCode();
      return null;
    } finally {
      closeQuietly(dir);
    }
  }

  /** The errno behind the last call that answered null. */
  public int lastErrno() {
    return lastErrno;
  }

  /** The numeric entries of an open directory, ascending. */
  private int[] numbers(int dirFd) {
    int[] found = new int[512];
    int count = 0;
    while (true) {
      int n = (int) getdents64(dirFd, nativeBuf, dents.length);
      if (n <= 0) {
        break;
      }
      nativeBuf.read(0, dents, 0, n);
      for (int off = 0; off < n; ) {
        int reclen = Short.toUnsignedInt(dentsView.getShort(off + 16));
        int id = number(dents, off + 19, off + reclen);
        if (id >= 0) {
          if (count == found.length) {
            found = Arrays.copyOf(found, count * 2);
          }
          found[count++] = id;
        }
        off += reclen;
      }
    }
    int[] sorted = Arrays.copyOf(found, count);
    Arrays.sort(sorted);
    return sorted;
  }

  /**
   * Reads /proc/PID/NAME to its end into {@link #bytes()}.
   *
   * @return the length read, or -errno of the open or read that failed
   */
  public int readFile(int pid, String file) {
    return readFile(relative(pid, file), false);
  }

  /** As {@link #readFile(int, String)} for any path relative to /proc, e.g. "12/task/14/maps". */
  public int readFile(String path) {
    return readFile(cString(path), false);
  }

  /**
   * Reads a /proc file whose whole text the kernel makes at once (a single_open file such as
   * /proc/PID/stat): a read shorter than the buffer returned all of it, so the read that would
   * only say "end of file" is left out. One system call fewer per holder per pass; not for maps or
   * any file made record by record, where a short read does not mean the end.
   */
  public int readWholeRecordFile(int pid, String file) {
    return readFile(relative(pid, file), true);
  }

  /**
   * Reads the entry {@code n} of an open directory such as /proc/PID/fdinfo, a file the kernel
   * makes at once (as {@link #readWholeRecordFile}).
   */
  public int readEntry(int dirFd, int n) {
    int fd;
    try {
      fd = openat(dirFd, path(decimal(n)), O_RDONLY | O_CLOEXEC);
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
    return readOpen(fd, true);
  }

  private int readFile(byte[] path, boolean shortReadIsEnd) {
    int fd = openAt(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return fd;
    }
    return readOpen(fd, shortReadIsEnd);
  }

  private int readOpen(int fd, boolean shortReadIsEnd) {
    int length = 0;
    try {
      while (true) {
        int n = (int) read(fd, nativeBuf, nativeBuf.size());
        if (n <= 0) {
          return length;
        }
        if (length + n > bytes.length) {
          bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + n));
        }
        nativeBuf.read(0, bytes, length, n);
        length += n;
        if (shortReadIsEnd && n < nativeBuf.size()) {
          return length;
        }
      }
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    } finally {
      closeQuietly(fd);
    }
  }

  /** Takes whole lines of a file read by {@link #readLines}. */
  public interface Lines {
    /** The first {@code length} bytes of {@code b}: one or more whole lines, the last ending in a newline or the file. */
    void accept(byte[] b, int length);
  }

  /**
   * Reads /proc/PATH (e.g. "12/maps") a bounded piece at a time, handing {@code lines} whole
   * lines: a file any user can make as large as they like (a process's maps with 65,000 mappings
   * of a long path, a user namespace's mountinfo with thousands of mounts) is never held whole.
   *
   * @return the bytes read (at most Integer.MAX_VALUE), or -errno of the open or read that failed,
   *     -E2BIG for a line longer than {@link #MAX_LINE}
   */
  public int readLines(String path, Lines lines) {
    int fd = openAt(cString(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return fd;
    }
    long total = 0;
    int have = 0; // bytes of a line not yet handed on, at the start of the buffer
    try {
      while (true) {
        if (have == bytes.length) {
          if (bytes.length >= MAX_LINE) {
            return -E2BIG;
          }
          bytes = Arrays.copyOf(bytes, Math.min(MAX_LINE, bytes.length * 2));
        }
        int n = (int) read(fd, nativeBuf, Math.min(nativeBuf.size(), bytes.length - have));
        if (n <= 0) {
          if (have > 0) {
            lines.accept(bytes, have);
          }
          return (int) Math.min(total, Integer.MAX_VALUE);
        }
        nativeBuf.read(0, bytes, have, n);
        int end = have + n;
        int lastNewline = -1;
        for (int i = end - 1; i >= have; i--) {
          if (bytes[i] == '\n') {
            lastNewline = i;
            break;
          }
        }
        total += n;
        have = end;
        if (lastNewline >= 0) {
          lines.accept(bytes, lastNewline + 1);
          have = end - lastNewline - 1;
          System.arraycopy(bytes, lastNewline + 1, bytes, 0, have);
        }
      }
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    } finally {
      closeQuietly(fd);
    }
  }

  /** The bytes of the last {@link #readFile}; valid until the next call. */
  public byte[] bytes() {
    return bytes;
  }

  /** Opens a directory relative to /proc, e.g. "12/task/14/fdinfo"; the descriptor, or -errno. */
  public int openDir(String path) {
    return openAt(cString(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }

  /**
   * How many threads the process has, from the link count of /proc/PID/task (the kernel adds one
   * link per thread, a group leader that exited before its threads included): one statx on procfs.
   *
   * @return the count (0 if the kernel did not say), or -errno
   */
  public int threadCount(int pid) {
    try {
      statx(procFd, path(relative(pid, "task")), 0, STATX_NLINK, statxMem);
      return Math.max(0, statxMem.getInt(16) - 2);
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /**
   * The mount that holds every memfd (the kernel's internal tmpfs, listed in no mountinfo), told
   * from a memfd of our own: its fdinfo's mnt_id and its device.
   *
   * @return {mnt_id, dev major, dev minor}, or null if it cannot be told here
   */
  public int[] memfdMount() {
    int fd;
    try (Memory label = new Memory(16)) {
      label.setString(0, "shmguard-probe", "US-ASCII");
      fd = (int) syscall(SYS_MEMFD_CREATE, Pointer.nativeValue(label), MFD_CLOEXEC, 0, 0, 0);
    } catch (LastErrorException e) {
      return null;
    }
    try {
      statx(fd, new byte[1], AT_EMPTY_PATH, STATX_INO_SIZE, statx);
      int length = readFile(cString("self/fdinfo/" + fd), true);
      if (length <= 0) {
        return null;
      }
      String text = new String(bytes, 0, length, java.nio.charset.StandardCharsets.US_ASCII);
      for (String line : text.split("\n")) {
        if (line.startsWith("mnt_id:")) {
          return new int[] {Integer.parseInt(line.substring(7).trim()), devMajor(), devMinor()};
        }
      }
      return null;
    } catch (LastErrorException | NumberFormatException e) {
      return null;
    } finally {
      closeQuietly(fd);
    }
  }

  /**
   * kcmp(2) KCMP_FILES: whether two tasks (thread ids of this PID namespace) share one fd table.
   *
   * @return 0 if they share it, a positive number if not, or -errno (ESRCH: one has gone; ENOSYS,
   *     EPERM, EACCES: kcmp cannot answer)
   */
  public static int sameFdTable(int tid1, int tid2) {
    try {
      return (int) syscall(SYS_KCMP, tid1, tid2, KCMP_FILES, 0, 0);
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /**
   * The fd numbers listed in an open /proc/PID/fd directory.
   *
   * @return how many were put in {@code into[0]} (grown as needed), or -errno
   */
  public int fdNumbers(int dirFd, int[][] into) {
    int count = 0;
    int[] fds = into[0];
    try {
      while (true) {
        int n = (int) getdents64(dirFd, nativeBuf, dents.length);
        if (n <= 0) {
          into[0] = fds;
          return count;
        }
        nativeBuf.read(0, dents, 0, n);
        for (int off = 0; off < n; ) {
          int reclen = Short.toUnsignedInt(dentsView.getShort(off + 16));
          int fd = number(dents, off + 19, off + reclen);
          if (fd >= 0) {
            if (count == fds.length) {
              fds = Arrays.copyOf(fds, count * 2);
            }
            fds[count++] = fd;
          }
          off += reclen;
        }
      }
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /**
   * statx through the fd link {@code fd} in an open /proc/PID/fd directory (the link is followed,
   * so the result is the open file's); read it with {@link #devMajor()} and the others. It calls
   * the file's filesystem (a FUSE one may refuse root, a network one may stall): only for an fd
   * whose mount is already known to be a watched tmpfs. AT_STATX_DONT_SYNC all the same.
   *
   * @return 0, or -errno
   */
  public int statFd(int dirFd, int fd) {
    try {
      statx(dirFd, path(decimal(fd)), AT_STATX_DONT_SYNC, STATX_INO_SIZE, statxMem);
      statxMem.read(0, statx, 0, statx.length);
      return 0;
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /**
   * statx of /proc/PATH, following the last link: for "PID/ns/mnt", the namespace's own nsfs
   * file, whose device and inode ({@link #devMajor()}, {@link #devMinor()}, {@link #ino()})
   * identify the namespace.
   *
   * @return 0, or -errno
   */
  public int stat(String path) {
    try {
      statx(procFd, path(cString(path)), AT_STATX_DONT_SYNC, STATX_INO_SIZE, statxMem);
      statxMem.read(0, statx, 0, statx.length);
      return 0;
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  public int devMajor() {
    return statxView.getInt(136);
  }

  public int devMinor() {
    return statxView.getInt(140);
  }

  public long ino() {
    return statxView.getLong(32);
  }

  public long size() {
    return statxView.getLong(40);
  }

  /**
   * readlinkat of the fd link {@code fd} into a reused buffer: the kernel answers it from its
   * dentries (d_path), without asking the file's filesystem anything.
   *
   * @return the length (see {@link #linkStartsWithSlash()} and {@link #linkText()}), or -errno
   */
  public int fdLink(int dirFd, int fd) {
    try {
      linkLength = (int) readlinkat(dirFd, path(decimal(fd)), linkMem, linkMem.size());
      linkMem.read(0, link, 0, linkLength);
      return linkLength;
    } catch (LastErrorException e) {
      linkLength = 0;
      return -e.getErrorCode();
    }
  }

  /** Whether the last {@link #fdLink} is a path ("/...") rather than "socket:[..]", "pipe:[..]" and the like. */
  public boolean linkStartsWithSlash() {
    return linkLength > 0 && link[0] == '/';
  }

  public String linkText() {
    return new String(link, 0, linkLength, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The text of the link /proc/PATH (e.g. "12/task/14/ns/mnt"), or null if it could not be read. */
  public String readLink(String path) {
    return readLink(procFd, cString(path));
  }

  /**
   * The inode number in the namespace link /proc/PID/ns/NAME ("mnt:[4026531841]"), read without
   * making a String: discovery reads one per process.
   *
   * @return the inode number, or -errno (-ENOENT also for a link of another form)
   */
  public long namespaceInode(int pid, String name) {
    try {
      int n = (int) readlinkat(procFd, path(relative(pid, "ns/" + name)), linkMem, linkMem.size());
      linkMem.read(0, link, 0, n);
      long v = 0;
      int i = 0;
      while (i < n && link[i] != '[') {
        i++;
      }
      int start = ++i;
      for (; i < n && link[i] >= '0' && link[i] <= '9' && i - start < 19; i++) {
        v = v * 10 + (link[i] - '0');
      }
      return i > start && i < n && link[i] == ']' ? v : -ENOENT;
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /** The text of the link /proc/PID/PATH, or null if it could not be read. */
  public String readLink(int pid, String path) {
    byte[] p = relative(pid, path);
    return readLink(procFd, p);
  }

  private String readLink(int dirFd, byte[] path) {
    try {
      int n = (int) readlinkat(dirFd, path(path), linkMem, linkMem.size());
      linkMem.read(0, link, 0, n);
      return new String(link, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    } catch (LastErrorException e) {
      return null;
    }
  }

  public void closeFd(int fd) {
    closeQuietly(fd);
  }

  @Override
  public void close() {
    closeQuietly(procFd);
    nativeBuf.close(); // freed now rather than by JNA's cleaner thread after a collection
    linkMem.close();
    statxMem.close();
    pathMem.close();
  }

  private int openAt(byte[] path, int flags) {
    try {
      return openat(procFd, path(path), flags);
    } catch (LastErrorException e) {
      return -e.getErrorCode();
    }
  }

  /** {@code cPath} (NUL-terminated) in the reused native path buffer, for the next call. */
  private Pointer path(byte[] cPath) {
    int length = 0;
    while (length < cPath.length && cPath[length] != 0) {
      length++;
    }
    if (length >= PATH_MAX) {
      throw new LastErrorException(ENAMETOOLONG);
    }
    pathMem.write(0, cPath, 0, length);
    pathMem.setByte(length, (byte) 0);
    return pathMem;
  }

  /** "PID/FILE\0" relative to the /proc handle, in a fresh array. */
  private static byte[] relative(int pid, String file) {
    return cString(pid + "/" + file);
  }

  private static byte[] cString(String s) {
    byte[] b = new byte[s.length() + 1];
    for (int i = 0; i < s.length(); i++) {
      b[i] = (byte) s.charAt(i);
    }
    return b;
  }

  /** The NUL-terminated decimal name of {@code n}, in the reused name buffer. */
  private byte[] decimal(int n) {
    int len = 1;
    for (int v = n; v >= 10; v /= 10) {
      len++;
    }
    for (int i = len - 1, v = n; i >= 0; i--, v /= 10) {
      name[i] = (byte) ('0' + v % 10);
    }
    name[len] = 0;
    return name;
  }

  /**
   * The decimal number in a NUL-terminated dirent name, or -1 if it is not one. Every int is
   * accepted (an fd number can have 10 digits where the fd limit is raised): a name skipped here
   * would be an fd never looked at.
   */
  private static int number(byte[] b, int start, int limit) {
    long v = 0;
    int i = start;
    for (; i < limit && b[i] != 0; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9 || i - start >= 10) {
        return -1;
      }
      v = v * 10 + d;
    }
    return i == start || v > Integer.MAX_VALUE ? -1 : (int) v;
  }

  private static void closeQuietly(int fd) {
    try {
      close(fd);
    } catch (LastErrorException e) {
      // a close of a /proc file cannot lose data; nothing to do
    }
  }
}
