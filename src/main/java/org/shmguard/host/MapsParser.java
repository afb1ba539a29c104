package org.shmguard.host;

import org.shmguard.model.Dev;

/**
 * Parses /proc/PID/maps without allocating for the lines that do not concern us.
 * A line: {@code 7f3a00000000-7f3a00932000 rw-s 00000000 00:1a 123456   /dev/shm/nccl-Ab12Cd (deleted)}.
 */
final class MapsParser {
  interface Match {
    void accept(Dev dev, long ino, long length, String path);
  }

  private MapsParser() {}

  static void forEachMatch(String text, long[] wanted, Match match) {
    int n = text.length();
    int pos = 0;
    while (pos < n) {
      int eol = text.indexOf('\n', pos);
      if (eol < 0) {
        eol = n;
      }
      parseLine(text, pos, eol, wanted, match);
      pos = eol + 1;
    }
  }

  private static void parseLine(String s, int start, int end, long[] wanted, Match match) {
    int i = start;
    long lo = 0;
    while (i < end && s.charAt(i) != '-') {
      lo = (lo << 4) | hex(s.charAt(i++));
    }
    i++;
    long hi = 0;
    while (i < end && s.charAt(i) != ' ') {
      hi = (hi << 4) | hex(s.charAt(i++));
    }
    i = skipField(s, i, end); // to perms
    i = skipField(s, i, end); // to offset
    i = skipField(s, i, end); // to dev
    if (i >= end) {
      return;
    }
    long major = 0;
    while (i < end && s.charAt(i) != ':') {
      major = (major << 4) | hex(s.charAt(i++));
    }
    i++;
    long minor = 0;
    while (i < end && s.charAt(i) != ' ') {
      minor = (minor << 4) | hex(s.charAt(i++));
    }
    long key = (major << 32) | (minor & 0xffffffffL);
    if (!HolderScanner.contains(wanted, key)) {
      return;
    }
    while (i < end && s.charAt(i) == ' ') {
      i++;
    }
    long ino = 0;
    while (i < end && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
      ino = ino * 10 + (s.charAt(i++) - '0');
    }
    if (ino == 0) {
      return;
    }
    while (i < end && s.charAt(i) == ' ') {
      i++;
    }
    match.accept(Dev.of((int) major, (int) minor), ino, hi - lo, s.substring(i, end));
  }

  /** From inside a field, to the first character of the next one. */
  private static int skipField(String s, int i, int end) {
    while (i < end && s.charAt(i) != ' ') {
      i++;
    }
    while (i < end && s.charAt(i) == ' ') {
      i++;
    }
    return i;
  }

  private static int hex(char c) {
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
