package org.shmguard.nativ;

import com.sun.jna.Library;
import com.sun.jna.Native;

/** Loads libsystemd once for {@link Journal} and {@link Notify}; absent on hosts without systemd. */
final class LibSystemd {
  private LibSystemd() {}

  /** Loads {@code type} from libsystemd, or returns null with the reason in {@code why[0]}. */
  static <T extends Library> T load(Class<T> type, String[] why) {
    for (String name : new String[] {"systemd", "libsystemd.so.0"}) {
      try {
        return Native.load(name, type);
      } catch (UnsatisfiedLinkError e) {
        why[0] = "libsystemd cannot be loaded: " + e.getMessage().lines().findFirst().orElse("");
      }
    }
    return null;
  }
}
