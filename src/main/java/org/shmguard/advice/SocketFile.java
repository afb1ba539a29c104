package org.shmguard.advice;

import java.io.Closeable;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import org.shmguard.nativ.RootDirectory;
import org.shmguard.nativ.StatxResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The advice socket's file: bound in a directory only root can change (made 0755 if missing),
 * 0666 so that any user's launcher may ask (what changes the host is decided per request by
 * SO_PEERCRED), and removed on close only if it is still the socket this bound.
 *
 * <p>What was at the path before is never followed: root's own socket there is asked whether a
 * daemon still answers (through the directory handle); anything else (a stale socket, a link, a
 * FIFO, someone else's socket) is replaced by a rename, with a warning for what was not root's.
 */
final class SocketFile implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(SocketFile.class);
  static final int MODE = 0666;
  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;
  private final RootDirectory dir;
  private final String name;
  private final StatxResult entry;
  private final ServerSocketChannel channel;

  private SocketFile(RootDirectory dir, String name, StatxResult entry, ServerSocketChannel channel) {
    this.dir = dir;
    this.name = name;
    this.entry = entry;
    this.channel = channel;
  }

  /** Listens at {@code path}; fails with {@link SocketInUseException} if a daemon already answers there. */
  static SocketFile bind(Path path, int backlog) throws IOException {
    Path abs = path.toAbsolutePath();
    String name = abs.getFileName().toString();
    RootDirectory dir = RootDirectory.open(abs.getParent(), true);
    try {
      StatxResult old = dir.entry(name);
      boolean oursBefore = old != null && isSocket(old) && RootDirectory.ownedByUs(old);
      if (oursBefore && answers(dir.throughHandle(name))) {
        throw new SocketInUseException("another shmguard already answers on " + path
            + "; stop it (or shmguard.socket, which holds the socket for the service) or configure another advice.socket");
      }
      if (old != null && !oursBefore) {
        LOG.warn("advice socket: replacing what uid {} left at {} (mode {}), without following it", old.uid(), path,
            String.format("%06o", old.mode()));
      }
      ServerSocketChannel ch = dir.bindSocket(name, MODE, 64);
      if ((dir.mode() & 0005) != 0005) {
        LOG.warn("advice socket: {} is mode {}, so only root can reach the socket in it; make it 0755 "
            + "(the shipped unit's RuntimeDirectoryMode=0755 does)", abs.getParent(), String.format("%04o", dir.mode()));
      }
      return new SocketFile(dir, name, dir.entry(name), ch);
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  ServerSocketChannel channel() {
    return channel;
  }

  private static boolean isSocket(StatxResult st) {
    return (st.mode() & S_IFMT) == S_IFSOCK;
  }

  private static boolean answers(Path path) {
    try (SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(path))) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Removes the socket file, if it is still the one this bound. */
  @Override
  public void close() throws IOException {
    try {
      if (entry != null) {
        dir.unlinkIfSame(name, entry);
      }
    } finally {
      dir.close();
    }
  }
}
