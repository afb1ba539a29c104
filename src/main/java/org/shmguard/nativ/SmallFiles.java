package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.io.IOException;

/**
 * Reads a small regular file (a configuration) so that nothing placed at its path can make the
 * read wait or grow: the path is stat'ed and refused unless it is a regular file, then opened
 * with O_NONBLOCK (a FIFO swapped in meanwhile does not wait for a writer) and O_NOCTTY, checked
 * again on the descriptor, and read for at most {@code limit + 1} bytes, so the caller can tell
 * "too large" without reading more.
 *
 * <pre>{@code
 * SmallFiles.Contents c = SmallFiles.readAtMost("/etc/shmguard/shmguard.yaml", 256 * 1024);
 * if (c.bytes().length > 256 * 1024) { ... too large ... }
 * }</pre>
 */
public final class SmallFiles {
  // The same values on x86_64 and arm64.
  private static final int O_RDONLY = 0;
  private static final int O_NOCTTY = 0x100;
  private static final int O_NONBLOCK = 0x800;
  private static final int O_CLOEXEC = 0x80000;
  private static final int EINTR = 4;
  private static final int S_IFMT = 0170000;

  interface LibC extends Library {
    int open(byte[] path, int flags) throws LastErrorException;

    long read(int fd, Pointer buf, long count) throws LastErrorException;

    int geteuid();
  }

  private static final class Holder {
    static final LibC LIBC = Native.load("c", LibC.class);
  }

  /**
   * What was read, and who owns the file.
   *
   * @param bytes at most {@code limit + 1} bytes from the start of the file
   * @param permissions the mode's permission bits (07777)
   */
  public record Contents(byte[] bytes, int ownerUid, int permissions) {}

  /** The path leads to something other than a regular file, named in words ("a FIFO"). */
  public static final class NotARegularFileException extends IOException {
    private final String kind;

    NotARegularFileException(String path, String kind) {
      super(path + " is " + kind + ", not a regular file");
      this.kind = kind;
    }

    public String kind() {
      return kind;
    }
  }

  private SmallFiles() {}

  /** The effective uid of this process. */
  public static int effectiveUid() {
    return Holder.LIBC.geteuid();
  }

  /** Up to {@code limit + 1} bytes of the regular file at {@code path} (links followed). */
  public static Contents readAtMost(String path, int limit) throws IOException {
    Linux linux = Linux.get();
    requireRegular(path, linux.stat(path));
    int fd;
    try {
      fd = Holder.LIBC.open(Linux.cString(path), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + path, e);
    }
    try {
      StatxResult st = linux.fstat(fd);
      requireRegular(path, st);
      return new Contents(read(fd, path, limit + 1), st.uid(), st.mode() & 07777);
    } finally {
      linux.close(fd);
    }
  }

  static byte[] read(int fd, String path, int max) throws IOException {
    Memory buf = new Memory(max);
    int total = 0;
    while (total < max) {
      long n;
      try {
        n = Holder.LIBC.read(fd, buf.share(total), max - total);
      } catch (LastErrorException e) {
        if (e.getErrorCode() == EINTR) {
          continue;
        }
        throw NativeErrors.io("read " + path, e);
      }
      if (n == 0) {
        break;
      }
      total += (int) n;
    }
    return buf.getByteArray(0, total);
  }

  static void requireRegular(String path, StatxResult st) throws NotARegularFileException {
    if (!st.isRegularFile()) {
      throw new NotARegularFileException(path, kind(st.mode()));
    }
  }

  private static String kind(int mode) {
    return switch (mode & S_IFMT) {
      case 0010000 -> "a FIFO";
      case 0020000 -> "a character device";
      case 0040000 -> "a directory";
      case 0060000 -> "a block device";
      case 0140000 -> "a socket";
      default -> "something else (mode " + Integer.toOctalString(mode) + ")";
    };
  }
}
