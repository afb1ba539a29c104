package org.shmguard.nativ;

/** Human text for an errno value, e.g. "No space left on device (ENOSPC)". */
public final class Errno {
  private Errno() {}

  public static String describe(int errno) {
    jnr.constants.platform.Errno e = jnr.constants.platform.Errno.valueOf(errno);
    if (e == null || e == jnr.constants.platform.Errno.__UNKNOWN_CONSTANT__) {
      return "errno " + errno;
    }
    return e.description() + " (" + e.name() + ")";
  }
}
