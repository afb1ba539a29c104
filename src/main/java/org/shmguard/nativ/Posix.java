package org.shmguard.nativ;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import jnr.posix.FileStat;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;
import jnr.posix.Passwd;
import jnr.posix.util.DefaultPOSIXHandler;

/**
 * Typed POSIX calls through jnr-posix: stat that follows links (for /proc/PID/fd entries), kill
 * with errno, and user names. Nothing else in shmguard uses jnr-posix.
 */
public final class Posix {
  private static final class Holder {
    static final Posix INSTANCE = new Posix(POSIXFactory.getNativePOSIX(new DefaultPOSIXHandler()));
  }

  private final POSIX posix;
  private final ConcurrentMap<Integer, Optional<String>> userNames = new ConcurrentHashMap<>();

  private Posix(POSIX posix) {
    this.posix = posix;
  }

  public static Posix get() {
    return Holder.INSTANCE;
  }

  /** Device and inode of what {@code path} leads to, or null if it cannot be stat'ed; errno() says why. */
  public FileId statFollow(String path, FileStat buffer) {
    if (posix.stat(path, buffer) != 0) {
      return null;
    }
    return new FileId(buffer.dev(), buffer.ino());
  }

  /** A reusable stat buffer for {@link #statFollow}: one per thread, not shared. */
  public FileStat newStatBuffer() {
    return posix.allocateStat();
  }

  public int errno() {
    return posix.errno();
  }

  /** The login name of {@code uid}, or empty where the passwd database has none. */
  public Optional<String> userName(int uid) {
    return userNames.computeIfAbsent(uid, u -> {
      Passwd pw = posix.getpwuid(u);
      return pw == null ? Optional.empty() : Optional.ofNullable(pw.getLoginName());
    });
  }

  /** kill(2): 0 on success, else the errno. */
  public int kill(int pid, int signal) {
    return posix.kill(pid, signal) == 0 ? 0 : posix.errno();
  }

  /** What stat reported: st_dev as glibc encodes it, and st_ino. */
  public record FileId(long encodedDev, long ino) {}
}
