package org.shmguard.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * CPU time of this whole process (every thread: the scan's and the garbage collection it causes)
 * in nanoseconds, from clock_gettime(CLOCK_PROCESS_CPUTIME_ID). The JDK's getProcessCpuTime counts
 * in 10 ms ticks here, too coarse for a 40 ms scan.
 */
final class CpuClock {
  private static final int CLOCK_PROCESS_CPUTIME_ID = 2;

  static {
    Native.register(CpuClock.class, NativeLibrary.getInstance("c"));
  }

  private CpuClock() {}

  /** struct timespec is two longs (tv_sec, tv_nsec) on the 64-bit Linux targets shmguard supports. */
  private static native int clock_gettime(int clock, long[] timespec);

  static long processNanos() {
    long[] ts = new long[2];
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, ts) != 0) {
      throw new IllegalStateException("clock_gettime(CLOCK_PROCESS_CPUTIME_ID) failed");
    }
    return ts[0] * 1_000_000_000L + ts[1];
  }
}
