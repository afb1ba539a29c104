package org.shmguard.gpu;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An NCCL release such as 2.21.5; comparable, parsed from "2.21.5", "2.21" or "v2.21.5-1". */
public record NcclVersion(int major, int minor, int patch) implements Comparable<NcclVersion> {
  private static final Pattern TEXT = Pattern.compile("v?(\\d+)\\.(\\d+)(?:\\.(\\d+))?(?:[-+].*)?");

  public NcclVersion {
    if (major < 0 || minor < 0 || patch < 0) {
      throw new IllegalArgumentException("version parts are not negative");
    }
  }

  public static NcclVersion of(int major, int minor, int patch) {
    return new NcclVersion(major, minor, patch);
  }

  /** Parses a version; throws IllegalArgumentException with the expected form for bad text. */
  public static NcclVersion parse(String text) {
    Matcher m = TEXT.matcher(text == null ? "" : text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("\"" + text + "\" is not an NCCL version such as 2.21.5");
    }
    return new NcclVersion(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)),
        m.group(3) == null ? 0 : Integer.parseInt(m.group(3)));
  }

  public boolean atLeast(int maj, int min, int pat) {
    return compareTo(new NcclVersion(maj, min, pat)) >= 0;
  }

  @Override
  public int compareTo(NcclVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(patch, o.patch);
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch;
  }
}
