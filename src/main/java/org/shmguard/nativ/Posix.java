package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Typed POSIX calls: user names (getpwuid_r, through the C library's name service switch, cached)
 * and kill with its errno. They are JNA direct-mapped methods, bound once when first used: no
 * interface proxy and no classes generated at start. (jnr-posix served them before; its
 * POSIXFactory generated its bindings with ASM when the first pass met a holder, several hundred
 * classes in a daemon that needs two calls. jnr-posix's constants name errno values, {@link Errno}.)
 */
public final class Posix {
  private static final int ERANGE = 34;
  /** getpwuid_r's buffer: glibc's own suggestion is 1 KiB; a directory entry with long fields may need more. */
  private static final int FIRST_BUFFER = 16 * 1024;
  private static final int LAST_BUFFER = 1024 * 1024;
  private static final Posix INSTANCE = new Posix();

  private final ConcurrentMap<Integer, Optional<String>> userNames = new ConcurrentHashMap<>();

  private Posix() {}

  public static Posix get() {
    return INSTANCE;
  }

  /** The login name of {@code uid}, or empty where the passwd database has none. */
  public Optional<String> userName(int uid) {
    return userNames.computeIfAbsent(uid, Posix::lookUp);
  }

  private static Optional<String> lookUp(int uid) {
    try (Memory pwd = new Memory(128); Memory result = new Memory(Native.POINTER_SIZE)) {
      for (int size = FIRST_BUFFER; size <= LAST_BUFFER; size *= 4) {
        try (Memory buf = new Memory(size)) {
          result.setPointer(0, null);
          int rc = Libc.getpwuid_r(uid, pwd, buf, size, result);
          if (rc == ERANGE) {
            continue;
          }
          Pointer found = result.getPointer(0);
          if (rc != 0 || found == null) {
            return Optional.empty();
          }
          Pointer name = found.getPointer(0); // struct passwd's first field, char *pw_name
          return name == null ? Optional.empty() : Optional.of(name.getString(0));
        }
      }
      return Optional.empty();
    }
  }

  /** kill(2): 0 on success, else the errno. */
  public int kill(int pid, int signal) {
    try {
      return Libc.kill(pid, signal);
    } catch (LastErrorException e) {
      return e.getErrorCode();
    }
  }

  /** The C library's entry points, direct-mapped when this class is first used. */
  private static final class Libc {
    static {
      Native.register(Libc.class, "c");
    }

    private Libc() {}

    static native int getpwuid_r(int uid, Pointer pwd, Pointer buf, long buflen, Pointer result);

    static native int kill(int pid, int signal) throws LastErrorException;
  }
}
