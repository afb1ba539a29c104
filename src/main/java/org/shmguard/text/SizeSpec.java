package org.shmguard.text;

/**
 * A size given either in bytes or as a percentage of the host's memory, as the remount settings
 * take it ("2G", "25%"); resolved against the memory size when it is used.
 */
public record SizeSpec(long bytes, int percentOfRam) {
  public SizeSpec {
    if ((bytes > 0) == (percentOfRam > 0) || bytes < 0 || percentOfRam < 0 || percentOfRam > 100) {
      throw new IllegalArgumentException("a size is either bytes or a percentage from 1 to 100 of memory");
    }
  }

  public static SizeSpec ofBytes(long bytes) {
    return new SizeSpec(bytes, 0);
  }

  public static SizeSpec ofPercent(int percent) {
    return new SizeSpec(0, percent);
  }

  /** Bytes this size stands for on a host with {@code ramBytes} of memory. */
  public long resolve(long ramBytes) {
    // split so that neither overflow nor early rounding loses bytes
    return percentOfRam > 0 ? ramBytes / 100 * percentOfRam + ramBytes % 100 * percentOfRam / 100 : bytes;
  }

  @Override
  public String toString() {
    return percentOfRam > 0 ? percentOfRam + "% of memory" : bytes + " bytes";
  }
}
