package org.shmguard.text;

import java.util.Locale;

/** Byte counts for people: 0, 512B, 4.0K, 9.2M, 1.5G (powers of 1024, as df -h). */
public final class Bytes {
  private Bytes() {}

  public static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + "B";
    }
    String units = "KMGTPE";
    double v = bytes;
    int u = -1;
    while (v >= 1024 && u < units.length() - 1) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, v >= 100 ? "%.0f%c" : "%.1f%c", v, units.charAt(u));
  }
}
