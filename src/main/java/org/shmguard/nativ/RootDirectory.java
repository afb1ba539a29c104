package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * A directory that only root can change, opened without following anyone else's links: the one
 * way shmguard creates files (the node_exporter textfile, advice.env, the advice socket).
 *
 * <p>The rule, checked on every directory from "/" down, each opened relative to the one before
 * with O_NOFOLLOW and fstat'ed on its descriptor: it is owned by root (or by the daemon's own
 * uid) and no group or other user may write it; a directory on the way (never the last) may
 * instead carry the sticky bit, as /tmp does, since others can add names there but cannot rename
 * or remove root's. A symbolic link on the way is followed only when root owns it (it then sits
 * in a directory only root changes, or root made it in a sticky one), and its target is checked
 * by the same rule. Anything else ends the walk with an error naming the directory and the owner.
 *
 * <p>In such a directory no one else can add, rename or remove a name, so root's names stay
 * root's. Files are still made so that nothing already there is ever opened, followed or
 * chmod'ed: a new file under an unguessable name (O_CREAT|O_EXCL|O_NOFOLLOW|O_NONBLOCK), its
 * owner and mode set on its descriptor, then renamed over the final name, which replaces whatever
 * was there (a link, a FIFO, a stale socket) without touching what it pointed to.
 *
 * <pre>{@code
 * try (RootDirectory dir = RootDirectory.open(Path.of("/run/shmguard"), true)) {
 *   dir.replaceFile("advice.env", bytes, 0644);
 * }
 * }</pre>
 */
public final class RootDirectory implements AutoCloseable {
  static final int AT_FDCWD = -100;
  static final int AT_SYMLINK_NOFOLLOW = 0x100;
  static final int AT_EMPTY_PATH = 0x1000;
  private static final int STATX_BASIC_STATS = 0x7ff;
  static final int O_RDONLY = 0;
  private static final int O_WRONLY = 1;
  private static final int O_CREAT = 0x40;
  private static final int O_EXCL = 0x80;
  private static final int O_NONBLOCK = 0x800;
  static final int O_CLOEXEC = 0x80000;
  static final int O_DIRECTORY = Platform.isARM() ? 0x4000 : 0x10000;
  static final int O_NOFOLLOW = Platform.isARM() ? 0x8000 : 0x20000;
  private static final int O_NOCTTY = 0x100;
  private static final int EINTR = 4;
  private static final int ELOOP = 40;
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Raw libc entry points; every call reports failure by throwing LastErrorException. */
  interface LibC extends Library {
    int openat(int dirfd, byte[] path, int flags, int mode) throws LastErrorException;

    int mkdirat(int dirfd, byte[] path, int mode) throws LastErrorException;

    int statx(int dirfd, byte[] path, int flags, int mask, Memory buf) throws LastErrorException;

    long readlinkat(int dirfd, byte[] path, byte[] buf, long size) throws LastErrorException;

    int fchmod(int fd, int mode) throws LastErrorException;

    int fchown(int fd, int uid, int gid) throws LastErrorException;

    int fchmodat(int dirfd, byte[] path, int mode, int flags) throws LastErrorException;

    int fchownat(int dirfd, byte[] path, int uid, int gid, int flags) throws LastErrorException;

    int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) throws LastErrorException;

    int unlinkat(int dirfd, byte[] path, int flags) throws LastErrorException;

    long write(int fd, Pointer buf, long count) throws LastErrorException;

    int close(int fd) throws LastErrorException;

    int geteuid();

    int getegid();
  }

  private static final class Holder {
    static final LibC LIBC = Native.load("c", LibC.class);
  }

  private final LibC libc;
  private final int fd;
  private final Path path;
  private boolean closed;

  RootDirectory(LibC libc, int fd, Path path) {
    this.libc = libc;
    this.fd = fd;
    this.path = path;
  }

  /**
   * Opens the directory at the absolute {@code dir} by the rule above. With {@code create},
   * missing directories are made (mkdirat under a checked parent, then root:root 0755 set on the
   * new descriptor); without, a missing one is an error.
   */
  public static RootDirectory open(Path dir, boolean create) throws IOException {
    if (!dir.isAbsolute()) {
      throw new IOException(dir + " is not an absolute path");
    }
    return new DirectoryWalk(Holder.LIBC, create).to(dir);
  }

  /** The path this handle was opened from, for messages only. */
  public Path path() {
    return path;
  }

  /** The permission bits of the directory itself (such as 0755), read from its descriptor. */
  public int mode() throws IOException {
    return statOf(libc, fd, new byte[] {0}, AT_EMPTY_PATH, "the directory " + path).mode() & 07777;
  }

  /** lstat of one entry, or null when there is none; a link is reported as a link. */
  public StatxResult entry(String name) throws IOException {
    try {
      return statOf(libc, fd, cName(name), AT_SYMLINK_NOFOLLOW, path.resolve(name).toString());
    } catch (java.nio.file.NoSuchFileException e) {
      return null;
    }
  }

  /**
   * Each entry name of this directory (not . and ..), handed over one at a time: only root can add
   * a name here, so the names are root's. A name that is not UTF-8 comes with its bytes replaced.
   */
  public void forEachName(java.util.function.Consumer<String> each) throws IOException {
    Linux.get().forEachName(fd, name -> each.accept(new String(name, java.nio.charset.StandardCharsets.UTF_8)));
  }

  /** True when {@code st} belongs to root or to this process's own user. */
  public static boolean ownedByUs(StatxResult st) {
    return st.uid() == 0 || st.uid() == Holder.LIBC.geteuid();
  }

  /**
   * Replaces {@code name} with a new regular file holding {@code content}, owned by this
   * process's user and group with {@code mode}. Whatever held the name (a file, a link, a FIFO, a
   * socket) is replaced by the rename and never opened; a directory there is an error. Readers
   * see the old file or the new one, never a part.
   */
  public void replaceFile(String name, byte[] content, int mode) throws IOException {
    byte[] tmp = cName(tempName(name));
    int file;
    try {
      file = libc.openat(fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    } catch (LastErrorException e) {
      throw NativeErrors.io("create a file in " + path, e);
    }
    boolean renamed = false;
    try {
      try {
        libc.fchown(file, libc.geteuid(), libc.getegid());
        libc.fchmod(file, mode);
      } catch (LastErrorException e) {
        throw NativeErrors.io("set owner and mode of a new file in " + path, e);
      }
      writeAll(file, content, path.resolve(name));
      close(file);
      file = -1;
      rename(tmp, name);
      renamed = true;
    } finally {
      if (file >= 0) {
        close(file);
      }
      if (!renamed) {
        unlinkQuietly(tmp);
      }
    }
  }

  /**
   * A listening Unix socket at {@code name}, with {@code mode} and this process's owner. It is
   * bound under a fresh name reached through this handle (/proc/self/fd/N/...; bind never
   * follows a link there), given its owner and mode there, and renamed over {@code name}, which
   * replaces a stale socket or anything planted without following it. The caller decides first
   * whether a socket already at {@code name} is a live daemon.
   */
  public ServerSocketChannel bindSocket(String name, int mode, int backlog) throws IOException {
    String tmpName = tempName(name);
    byte[] tmp = cName(tmpName);
    ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    boolean renamed = false;
    try {
      ch.bind(UnixDomainSocketAddress.of(throughHandle(tmpName)), backlog);
      try {
        // By name, but in a directory only root changes: no one else can swap the entry between
        // bind and these calls. The socket's own descriptor would change the socket, not the file.
        libc.fchownat(fd, tmp, libc.geteuid(), libc.getegid(), AT_SYMLINK_NOFOLLOW);
        libc.fchmodat(fd, tmp, mode, 0);
      } catch (LastErrorException e) {
        throw NativeErrors.io("set owner and mode of the socket in " + path, e);
      }
      rename(tmp, name);
      renamed = true;
      return ch;
    } finally {
      if (!renamed) {
        ch.close();
        unlinkQuietly(tmp);
      }
    }
  }

  /**
   * A path that reaches {@code name} through this open handle (/proc/self/fd/N/name), not through
   * the directory's path: for the JDK's socket calls, which take only paths. Its last component
   * is still looked up by name, so use it only for an entry checked with {@link #entry}.
   */
  public Path throughHandle(String name) {
    return Path.of("/proc/self/fd/" + fd + "/" + checkName(name));
  }

  /**
   * Up to {@code limit + 1} bytes of the regular file {@code name} in this directory, with its
   * owner and mode: opened without following a link (O_NOFOLLOW) or waiting on a FIFO
   * (O_NONBLOCK), and checked on its descriptor. A link, FIFO or anything else there is an
   * error; a missing file is {@link java.nio.file.NoSuchFileException}.
   */
  public SmallFiles.Contents readFile(String name, int limit) throws IOException {
    String what = path.resolve(name).toString();
    int file;
    try {
      file = libc.openat(fd, cName(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0);
    } catch (LastErrorException e) {
      if (e.getErrorCode() == ELOOP) {
        throw new SmallFiles.NotARegularFileException(what, "a symbolic link");
      }
      throw NativeErrors.io("open " + what, e);
    }
    try {
      StatxResult st = statOf(libc, file, new byte[] {0}, AT_EMPTY_PATH, what);
      SmallFiles.requireRegular(what, st);
      return new SmallFiles.Contents(SmallFiles.read(file, what, limit + 1), st.uid(), st.mode() & 07777);
    } finally {
      close(file);
    }
  }

  /** Removes {@code name} if it is still the very entry {@code expected} describes (same device and inode). */
  public boolean unlinkIfSame(String name, StatxResult expected) throws IOException {
    StatxResult now = entry(name);
    if (now == null || now.ino() != expected.ino() || now.devMajor() != expected.devMajor()
        || now.devMinor() != expected.devMinor()) {
      return false;
    }
    try {
      libc.unlinkat(fd, cName(name), 0);
      return true;
    } catch (LastErrorException e) {
      throw NativeErrors.io("unlink " + path.resolve(name), e);
    }
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      close(fd);
    }
  }

  private void rename(byte[] tmp, String name) throws IOException {
    try {
      libc.renameat(fd, tmp, fd, cName(name));
    } catch (LastErrorException e) {
      throw NativeErrors.io("rename over " + path.resolve(name), e);
    }
  }

  private void writeAll(int file, byte[] content, Path what) throws IOException {
    if (content.length == 0) {
      return;
    }
    Memory buf = new Memory(content.length);
    buf.write(0, content, 0, content.length);
    long off = 0;
    while (off < content.length) {
      try {
        off += libc.write(file, buf.share(off), content.length - off);
      } catch (LastErrorException e) {
        if (e.getErrorCode() != EINTR) {
          throw NativeErrors.io("write " + what, e);
        }
      }
    }
  }

  private void unlinkQuietly(byte[] name) {
    try {
      libc.unlinkat(fd, name, 0);
    } catch (LastErrorException ignored) {
      // not there (never made, or already renamed): nothing to clean up
    }
  }

  private void close(int descriptor) {
    try {
      libc.close(descriptor);
    } catch (LastErrorException ignored) {
      // nothing to act on: the data was written before, and renames are checked
    }
  }

  /** ".name.<16 random hex>.tmp": hidden from node_exporter (it reads *.prom) and unguessable. */
  private static String tempName(String name) {
    byte[] r = new byte[8];
    RANDOM.nextBytes(r);
    return "." + checkName(name) + "." + HexFormat.of().formatHex(r) + ".tmp";
  }

  private static String checkName(String name) {
    if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0 || name.indexOf('\0') >= 0) {
      throw new IllegalArgumentException("not a file name: \"" + name + "\"");
    }
    return name;
  }

  private static byte[] cName(String name) {
    return Linux.cString(checkName(name));
  }

  static StatxResult statOf(LibC libc, int dirfd, byte[] name, int flags, String what) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    try {
      libc.statx(dirfd, name, flags, STATX_BASIC_STATS, buf);
      return StatxResult.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx " + what, e);
    }
  }
}
