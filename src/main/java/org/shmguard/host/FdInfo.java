package org.shmguard.host;

/**
 * Fields of /proc/PID/fdinfo/N, a text the kernel writes from the open file alone ("pos:",
 * "flags:", "mnt_id:", "ino:", one a line) without calling the file's filesystem: reading it
 * cannot wait on a FUSE or network server, unlike a stat through /proc/PID/fd/N.
 */
final class FdInfo {
  static final byte[] MNT_ID = {'m', 'n', 't', '_', 'i', 'd', ':'};
  static final byte[] INO = {'i', 'n', 'o', ':'};
  static final byte[] FLAGS = {'f', 'l', 'a', 'g', 's', ':'};

  private FdInfo() {}

  /** The decimal value of the line starting with {@code name} (e.g. "mnt_id:"), or -1 if there is none. */
  static long field(byte[] text, int length, byte[] name) {
    return field(text, length, name, 10);
  }

  /** The octal "flags:" field (O_PATH, the access mode...), or -1 where the line is missing. */
  static long flags(byte[] text, int length) {
    return field(text, length, FLAGS, 8);
  }

  private static long field(byte[] text, int length, byte[] name, int radix) {
    for (int line = 0; line < length; ) {
      if (startsWith(text, line, length, name)) {
        int i = line + name.length;
        while (i < length && (text[i] == ' ' || text[i] == '\t')) {
          i++;
        }
        long v = 0;
        int digits = 0;
        for (; i < length && text[i] >= '0' && text[i] < '0' + radix && digits < 19; i++, digits++) {
          v = v * radix + (text[i] - '0');
        }
        return digits == 0 ? -1 : v;
      }
      while (line < length && text[line] != '\n') {
        line++;
      }
      line++;
    }
    return -1;
  }

  private static boolean startsWith(byte[] text, int at, int length, byte[] name) {
    if (at + name.length > length) {
      return false;
    }
    for (int i = 0; i < name.length; i++) {
      if (text[at + i] != name[i]) {
        return false;
      }
    }
    return true;
  }
}
