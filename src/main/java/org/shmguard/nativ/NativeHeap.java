package org.shmguard.nativ;

import com.sun.jna.Native;

/**
 * Gives the C library's free heap back to the kernel. Starting a JVM and a first pass malloc and
 * free several MiB (class parsing, compilation, the first reads of /proc) that glibc keeps, in
 * holes below live blocks, as resident memory; malloc_trim(3) returns those pages. Called once,
 * when the daemon is ready. On a C library without malloc_trim (musl) it does nothing.
 */
public final class NativeHeap {
  private NativeHeap() {}

  /** malloc_trim(0); false where the C library has none. */
  public static boolean trim() {
    try {
      return Glibc.malloc_trim(0) == 1;
    } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
      return false;
    }
  }

  private static final class Glibc {
    static {
      Native.register(Glibc.class, "c");
    }

    private Glibc() {}

    static native int malloc_trim(long pad);
  }
}
