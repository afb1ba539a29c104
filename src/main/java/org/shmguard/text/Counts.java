package org.shmguard.text;

/**
 * Counts for people: "1 segment", "5 segments", "1 entry", "3 entries". One place, so no line
 * says "1 segments" or "5 files in 1 mounts".
 *
 * <pre>{@code
 * Counts.of(files, "file") + " in " + Counts.of(mounts, "mount")  // "5 files in 1 mount"
 * }</pre>
 */
public final class Counts {
  private Counts() {}

  /** {@code n} and the noun, with an "s" unless n is 1 ("entry" becomes "entries"). */
  public static String of(long n, String singular) {
    return n + " " + noun(n, singular);
  }

  /** The noun alone, singular for 1, plural otherwise. */
  public static String noun(long n, String singular) {
    if (n == 1) {
      return singular;
    }
    if (singular.endsWith("y") && !singular.endsWith("ey")) {
      return singular.substring(0, singular.length() - 1) + "ies";
    }
    if (singular.endsWith("s") || singular.endsWith("x") || singular.endsWith("sh")) {
      return singular + "es";
    }
    return singular + "s";
  }
}
