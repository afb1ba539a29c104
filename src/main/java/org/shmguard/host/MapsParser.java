package org.shmguard.host;

import java.nio.charset.StandardCharsets;
import org.shmguard.model.Dev;

/**
 * Parses /proc/PID/maps without allocating for the lines that do not concern us: it reads the raw
 * bytes (no decoding of the whole file into a String) and makes a String only of a matching path.
 * A line: {@code 7f3a00000000-7f3a00932000 rw-s 00000000 00:1a 123456   /dev/shm/nccl-Ab12Cd (deleted)}.
 */
final class MapsParser {
  interface Match {
    /** @param writesShared whether the mapping is shared and writable ("rw-s"): it can change the file */
    void accept(Dev dev, long ino, long length, String path, boolean writesShared);
  }

  private MapsParser() {}

  static void forEachMatch(String text, long[] wanted, Match match) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    forEachMatch(b, b.length, wanted, match);
  }

  /** Each mapping in the first {@code length} bytes of {@code b} whose device is one of {@code wanted}. */
  static void forEachMatch(byte[] b, int length, long[] wanted, Match match) {
    int pos = 0;
    while (pos < length) {
      int eol = pos;
      while (eol < length && b[eol] != '\n') {
        eol++;
      }
      parseLine(b, pos, eol, wanted, match);
      pos = eol + 1;
    }
  }

  private static void parseLine(byte[] s, int start, int end, long[] wanted, Match match) {
    // The address range is parsed only for a line on a watched device: most lines are not.
    int i = start;
    while (i < end && s[i] != ' ') {
      i++;
    }
    i = skipField(s, i, end); // to perms
    int perms = i;
    i = skipField(s, i, end); // to offset
    i = skipField(s, i, end); // to dev
    if (i >= end) {
      return;
    }
    long major = 0;
    while (i < end && s[i] != ':') {
      major = (major << 4) | hex(s[i++]);
    }
    i++;
    long minor = 0;
    while (i < end && s[i] != ' ') {
      minor = (minor << 4) | hex(s[i++]);
    }
    long key = (major << 32) | (minor & 0xffffffffL);
    if (!HolderScanner.contains(wanted, key)) {
      return;
    }
    while (i < end && s[i] == ' ') {
      i++;
    }
    long ino = 0;
    while (i < end && s[i] >= '0' && s[i] <= '9') {
      ino = ino * 10 + (s[i++] - '0');
    }
    if (ino == 0) {
      return;
    }
    while (i < end && s[i] == ' ') {
      i++;
    }
    int r = start;
    long lo = 0;
    while (r < end && s[r] != '-') {
      lo = (lo << 4) | hex(s[r++]);
    }
    r++;
    long hi = 0;
    while (r < end && s[r] != ' ') {
      hi = (hi << 4) | hex(s[r++]);
    }
    boolean writesShared = perms + 3 < end && s[perms + 1] == 'w' && s[perms + 3] == 's';
    match.accept(Dev.of((int) major, (int) minor), ino, hi - lo, new String(s, i, end - i, StandardCharsets.UTF_8),
        writesShared);
  }

  /** From inside a field, to the first character of the next one. */
  private static int skipField(byte[] s, int i, int end) {
    while (i < end && s[i] != ' ') {
      i++;
    }
    while (i < end && s[i] == ' ') {
      i++;
    }
    return i;
  }

  private static int hex(byte c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return 0;
  }
}
