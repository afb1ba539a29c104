package org.shmguard.model;

/**
 * A device number as major and minor, decoded so that minors above 255 stay right whichever way
 * the kernel wrote them: hex in /proc/PID/maps, decimal in mountinfo, glibc's split encoding in
 * st_dev.
 */
public record Dev(int major, int minor) implements Comparable<Dev> {
  public Dev {
    if (major < 0 || minor < 0) {
      throw new IllegalArgumentException("device numbers are not negative: " + major + ":" + minor);
    }
  }

  public static Dev of(int major, int minor) {
    return new Dev(major, minor);
  }

  /** From glibc's dev_t: minor is bits 0-7 and 20-39, major bits 8-19 and 40-63. */
  public static Dev fromEncoded(long dev) {
    int major = (int) (((dev >>> 8) & 0xfffL) | ((dev >>> 32) & 0xfffff000L));
    int minor = (int) ((dev & 0xffL) | ((dev >>> 12) & 0xffffff00L));
    return new Dev(major, minor);
  }

  /** From "major:minor" in decimal, as mountinfo and this class's toString write it. */
  public static Dev parseDecimal(String text) {
    return parse(text, 10);
  }

  /** From "major:minor" in hex, as /proc/PID/maps writes it ("00:1a", "00:10a"). */
  public static Dev parseHex(String text) {
    return parse(text, 16);
  }

  private static Dev parse(String text, int radix) {
    int colon = text.indexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("not a major:minor device number: " + text);
    }
    return new Dev(
        Integer.parseUnsignedInt(text, 0, colon, radix),
        Integer.parseUnsignedInt(text, colon + 1, text.length(), radix));
  }

  @Override
  public int compareTo(Dev o) {
    int c = Integer.compare(major, o.major);
    return c != 0 ? c : Integer.compare(minor, o.minor);
  }

  @Override
  public String toString() {
    return major + ":" + minor;
  }
}
