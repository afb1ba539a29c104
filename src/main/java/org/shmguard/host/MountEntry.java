package org.shmguard.host;

import java.util.ArrayList;
import java.util.List;
import org.shmguard.model.Dev;

/**
 * One line of /proc/PID/mountinfo.
 *
 * @param root the path inside the filesystem that is mounted (not "/" for a bind of a subdirectory)
 * @param mountPoint where it is mounted, relative to the reading process's root
 * @param superOptions the filesystem's own options, e.g. "rw,size=65536k,mode=1777"
 */
public record MountEntry(
    int mountId,
    int parentId,
    Dev dev,
    String root,
    String mountPoint,
    String mountOptions,
    String fsType,
    String source,
    String superOptions) {

  public boolean isTmpfs() {
    return "tmpfs".equals(fsType);
  }

  /**
   * Parses a whole mountinfo file. A line that does not parse is skipped: the format is the
   * kernel's, and one odd line must not hide every other mount.
   */
  public static List<MountEntry> parseAll(String text) {
    List<MountEntry> entries = new ArrayList<>();
    for (String line : text.split("\n")) {
      if (!line.isBlank()) {
        MountEntry e = parse(line);
        if (e != null) {
          entries.add(e);
        }
      }
    }
    return entries;
  }

  /** One line: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue". */
  public static MountEntry parse(String line) {
    String[] f = line.split(" ");
    int dash = -1;
    for (int i = 6; i < f.length; i++) {
      if (f[i].equals("-")) {
        dash = i;
        break;
      }
    }
    if (dash < 0 || dash + 2 >= f.length) {
      return null;
    }
    try {
      return new MountEntry(
          Integer.parseInt(f[0]),
          Integer.parseInt(f[1]),
          Dev.parseDecimal(f[2]),
          unescape(f[3]),
          unescape(f[4]),
          f[5],
          f[dash + 1],
          unescape(f[dash + 2]),
          dash + 3 < f.length ? f[dash + 3] : "");
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** mountinfo writes space, tab, newline and backslash as three-digit octal escapes. */
  static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && isOctal(s, i + 1)) {
        sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  private static boolean isOctal(String s, int from) {
    if (from + 3 > s.length()) {
      return false;
    }
    for (int i = from; i < from + 3; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '7') {
        return false;
      }
    }
    return true;
  }
}
