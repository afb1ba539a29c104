package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * shmguard's own resident memory, as the kernel counts it (VmRSS of /proc/self/status): what the
 * STATUS line and the {@code shmguard_resident_memory_bytes} metric report. It reads the
 * process's own /proc entry, never the configured host root: that may be another machine's /proc.
 *
 * <pre>{@code
 * long rss = SelfMemory.residentBytes(); // -1 when /proc is not mounted
 * }</pre>
 */
public final class SelfMemory {
  private static final Path STATUS = Path.of("/proc/self/status");

  private SelfMemory() {}

  /** Resident bytes now, or -1 when they cannot be read. */
  public static long residentBytes() {
    try {
      for (String line : Files.readAllLines(STATUS)) {
        if (line.startsWith("VmRSS:")) {
          String kb = line.substring("VmRSS:".length()).trim();
          int space = kb.indexOf(' ');
          return Long.parseLong(space < 0 ? kb : kb.substring(0, space)) * 1024;
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }
}
