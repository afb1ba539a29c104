package org.shmguard.nativ;

import static org.shmguard.nativ.RootDirectory.AT_EMPTY_PATH;
import static org.shmguard.nativ.RootDirectory.AT_FDCWD;
import static org.shmguard.nativ.RootDirectory.AT_SYMLINK_NOFOLLOW;
import static org.shmguard.nativ.RootDirectory.O_CLOEXEC;
import static org.shmguard.nativ.RootDirectory.O_DIRECTORY;
import static org.shmguard.nativ.RootDirectory.O_NOFOLLOW;
import static org.shmguard.nativ.RootDirectory.O_RDONLY;
import static org.shmguard.nativ.RootDirectory.ownedByUs;
import static org.shmguard.nativ.RootDirectory.statOf;

import com.sun.jna.LastErrorException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;

/**
 * One walk from "/" to a directory for {@link RootDirectory}, keeping a checked handle on each
 * directory passed; the rule it applies is the one RootDirectory documents, and lives here only.
 */
final class DirectoryWalk {
  private static final int ENOENT = 2;
  private static final int EEXIST = 17;
  private static final int ENOTDIR = 20;
  private static final int ELOOP = 40;
  private static final int S_IWGRP = 0020;
  private static final int S_IWOTH = 0002;
  private static final int S_ISVTX = 01000;
  private static final int MAX_LINKS = 32;

  private final RootDirectory.LibC libc;
  private final boolean create;
  private final Deque<Integer> fds = new ArrayDeque<>();
  private final Deque<String> names = new ArrayDeque<>();
  private int links;

  DirectoryWalk(RootDirectory.LibC libc, boolean create) {
    this.libc = libc;
    this.create = create;
  }

  RootDirectory to(Path dir) throws IOException {
    try {
      int root = open(AT_FDCWD, "/");
      fds.push(root);
      check(root, "/", false);
      Deque<String> todo = components(dir.toString());
      while (!todo.isEmpty()) {
        String c = todo.pop();
        if (c.equals("..")) {
          if (fds.size() > 1) {
            closeFd(fds.pop());
            names.pop();
          }
          continue;
        }
        step(c, todo);
      }
      check(fds.peek(), here(), true);
      int fd = fds.pop();
      return new RootDirectory(libc, fd, dir);
    } finally {
      while (!fds.isEmpty()) {
        closeFd(fds.pop());
      }
    }
  }

  /** Enters {@code name} under the current directory: opens it, makes it, or follows root's link. */
  private void step(String name, Deque<String> todo) throws IOException {
    int parent = fds.peek();
    for (int attempt = 0; ; attempt++) {
      try {
        int fd = libc.openat(parent, Linux.cString(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
        fds.push(fd);
        names.push(name);
        check(fd, here(), false);
        return;
      } catch (LastErrorException e) {
        int errno = e.getErrorCode();
        String at = child(name);
        if (errno == ENOENT && create && attempt == 0) {
          make(parent, name);
          continue;
        }
        if (errno == ELOOP || errno == ENOTDIR) {
          StatxResult st = statOf(libc, parent, Linux.cString(name), AT_SYMLINK_NOFOLLOW, at);
          if (!st.isSymlink()) {
            throw new IOException(at + " is not a directory");
          }
          if (!ownedByUs(st)) {
            throw new IOException(at + " is a symbolic link owned by uid " + st.uid()
                + "; shmguard follows only root's links on the way to a directory it writes in");
          }
          if (++links > MAX_LINKS) {
            throw new IOException(at + ": more than " + MAX_LINKS + " symbolic links on the way");
          }
          follow(readLink(parent, name, at), todo);
          return;
        }
        throw NativeErrors.io("open " + at, e);
      }
    }
  }

  private void make(int parent, String name) throws IOException {
    String at = child(name);
    try {
      libc.mkdirat(parent, Linux.cString(name), 0700);
    } catch (LastErrorException e) {
      if (e.getErrorCode() == EEXIST) {
        return; // made meanwhile by someone who could: the open that follows checks it
      }
      throw NativeErrors.io("mkdir " + at, e);
    }
    int fd = open(parent, name);
    try {
      libc.fchown(fd, libc.geteuid(), libc.getegid());
      libc.fchmod(fd, 0755);
    } catch (LastErrorException e) {
      throw NativeErrors.io("set owner and mode of " + at, e);
    } finally {
      closeFd(fd);
    }
  }

  private void follow(String target, Deque<String> todo) {
    Deque<String> parts = components(target);
    if (target.startsWith("/")) {
      while (fds.size() > 1) {
        closeFd(fds.pop());
        names.pop();
      }
    }
    while (!parts.isEmpty()) {
      todo.push(parts.pollLast());
    }
  }

  private String readLink(int parent, String name, String at) throws IOException {
    byte[] buf = new byte[4096];
    try {
      long n = libc.readlinkat(parent, Linux.cString(name), buf, buf.length);
      return new String(buf, 0, (int) n, StandardCharsets.UTF_8);
    } catch (LastErrorException e) {
      throw NativeErrors.io("readlink " + at, e);
    }
  }

  private void check(int fd, String at, boolean last) throws IOException {
    StatxResult st = statOf(libc, fd, new byte[] {0}, AT_EMPTY_PATH, at);
    if (!st.isDirectory()) {
      throw new IOException(at + " is not a directory");
    }
    if (!ownedByUs(st)) {
      throw new IOException(at + " is owned by uid " + st.uid()
          + ", not root; shmguard writes only where no other user can change the directories on the way");
    }
    boolean othersWrite = (st.mode() & (S_IWGRP | S_IWOTH)) != 0;
    boolean sticky = (st.mode() & S_ISVTX) != 0;
    if (othersWrite && (last || !sticky)) {
      throw new IOException(at + " is writable by " + ((st.mode() & S_IWOTH) != 0 ? "every user" : "its group")
          + " (mode " + String.format("%04o", st.mode() & 07777) + "); shmguard writes only in directories only root can change");
    }
  }

  private int open(int parent, String name) throws IOException {
    try {
      return libc.openat(parent, Linux.cString(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + (parent == AT_FDCWD ? name : child(name)), e);
    }
  }

  private String here() {
    if (names.isEmpty()) {
      return "/";
    }
    StringBuilder b = new StringBuilder();
    names.descendingIterator().forEachRemaining(n -> b.append('/').append(n));
    return b.toString();
  }

  private String child(String name) {
    String h = here();
    return (h.equals("/") ? "" : h) + "/" + name;
  }

  private void closeFd(int fd) {
    try {
      libc.close(fd);
    } catch (LastErrorException ignored) {
      // a read-only directory handle: nothing to report
    }
  }

  private static Deque<String> components(String path) {
    Deque<String> out = new ArrayDeque<>();
    Arrays.stream(path.split("/")).filter(c -> !c.isEmpty() && !c.equals(".")).forEach(out::add);
    return out;
  }
}
