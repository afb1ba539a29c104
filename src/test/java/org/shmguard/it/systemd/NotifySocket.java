package org.shmguard.it.systemd;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A unix datagram socket bound where a service manager's NOTIFY_SOCKET would be, so a test can
 * receive what sd_notify sends. Java 17 cannot bind datagram unix sockets, hence JNA.
 */
final class NotifySocket implements AutoCloseable {
  private static final int AF_UNIX = 1;
  private static final int SOCK_DGRAM = 2;
  private static final int SOCK_CLOEXEC = 0x80000;
  private static final int MSG_DONTWAIT = 0x40;
  private static final int EAGAIN = 11;

  interface LibC extends Library {
    int socket(int domain, int type, int protocol) throws LastErrorException;

    int bind(int fd, Memory addr, int len) throws LastErrorException;

    long recv(int fd, Memory buf, long len, int flags) throws LastErrorException;

    int close(int fd) throws LastErrorException;
  }

  private static final LibC C = Native.load("c", LibC.class);
  private final int fd;
  private final Path path;

  private NotifySocket(int fd, Path path) {
    this.fd = fd;
    this.path = path;
  }

  static NotifySocket bind(Path path) throws IOException {
    Files.deleteIfExists(path);
    int fd = C.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    // struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; }
    Memory addr = new Memory(110);
    addr.clear();
    addr.setShort(0, (short) AF_UNIX);
    byte[] p = path.toString().getBytes(StandardCharsets.UTF_8);
    addr.write(2, p, 0, p.length);
    C.bind(fd, addr, 2 + p.length + 1);
    return new NotifySocket(fd, path);
  }

  Path path() {
    return path;
  }

  /** The next datagram, or null if none arrives within {@code timeout}. */
  String receive(Duration timeout) throws InterruptedException {
    Memory buf = new Memory(4096);
    long end = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < end) {
      try {
        long n = C.recv(fd, buf, buf.size(), MSG_DONTWAIT);
        return new String(buf.getByteArray(0, (int) n), StandardCharsets.UTF_8);
      } catch (LastErrorException e) {
        if (e.getErrorCode() != EAGAIN) {
          throw e;
        }
      }
      Thread.sleep(5);
    }
    return null;
  }

  @Override
  public void close() throws IOException {
    C.close(fd);
    Files.deleteIfExists(path);
  }
}
