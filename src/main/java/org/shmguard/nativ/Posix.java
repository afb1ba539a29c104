package org.shmguard.nativ;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;
import jnr.posix.Passwd;
import jnr.posix.util.DefaultPOSIXHandler;

/**
 * Typed POSIX calls through jnr-posix: user names (getpwuid, cached) and kill with its errno.
 * Nothing else in shmguard uses jnr-posix. (The /proc pass once stat'ed fds through it; it now
 * uses direct-mapped JNA calls on one /proc handle, {@link ProcCalls}, which measured faster.)
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
}
