package org.shmguard.text;

import java.time.Duration;

/** Short human durations: "850ms", "42s", "3m10s", "2h5m", "3d4h". */
public final class Durations {
  private Durations() {}

  public static String human(Duration d) {
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + "ms";
    }
    long s = ms / 1000;
    if (s < 60) {
      return s + "s";
    }
    long m = s / 60;
    if (m < 60) {
      return s % 60 == 0 ? m + "m" : m + "m" + (s % 60) + "s";
    }
    long h = m / 60;
    if (h < 24) {
      return m % 60 == 0 ? h + "h" : h + "h" + (m % 60) + "m";
    }
    long days = h / 24;
    return h % 24 == 0 ? days + "d" : days + "d" + (h % 24) + "h";
  }
}
