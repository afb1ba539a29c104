package org.shmguard.host;

import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.shmguard.model.Dev;

/**
 * Which device each mount id belongs to, for the fds of one /proc pass: /proc/PID/fdinfo names
 * an open file's mount (mnt_id) without asking its filesystem anything, and mountinfo maps that
 * id to the device. Filled lazily, one mountinfo per mount namespace per pass.
 *
 * <p>Why per pass and not from discovery: the kernel reuses a freed mount id (lowest free first),
 * so a table kept from an earlier discovery can name the wrong device for an id that a new mount
 * (a container's bind of /dev/shm) has taken since, and a holder through it would go unseen. An
 * open fd pins its mount, so an id read while the fd is open names that fd's mount; the table
 * read in the same pass is stale only if a mount is freed and its id reused within the pass, and
 * the confirming pass before an unlink reads its own.
 *
 * <p>Memory: a pass may read every mount namespace's mountinfo, and any user can make namespaces
 * full of mounts. Only a mount of a watched device is kept with its device; every other mount is
 * one bit (mount ids are small: the kernel hands out the lowest free one), and {@link #device}
 * answers {@link #UNWATCHED} for it. So a million mounts cost about 128 KiB, not 80 MiB.
 *
 * <pre>{@code
 * MountIds ids = new MountIds(wanted);
 * if (!ids.hasRead(ns)) ids.learn(ns, bytes, length);   // a mountinfo text
 * Dev dev = ids.device(24);   // null when no mountinfo read lists mount 24
 * }</pre>
 */
final class MountIds {
  /** What {@link #device} answers for a listed mount of a device that is not watched: never a tmpfs's. */
  static final Dev UNWATCHED = Dev.of(0, 0);

  private final long[] wanted;
  private final Map<Integer, Dev> devByMount = new HashMap<>();
  private final BitSet otherMounts = new BitSet();
  private final Set<String> namespaces = new HashSet<>();

  /** @param wanted the watched devices, as {@link HolderScanner#encode(java.util.Collection)} gives them */
  MountIds(long[] wanted) {
    this.wanted = wanted.clone();
  }

  /**
   * The device of mount {@code mntId} if it is a watched one; {@link #UNWATCHED} for any other
   * mount a mountinfo read in this pass lists; null if none lists it.
   */
  Dev device(int mntId) {
    Dev d = devByMount.get(mntId);
    return d != null ? d : otherMounts.get(mntId) ? UNWATCHED : null;
  }

  /** Whether the mounts of namespace {@code ns} were read in this pass. */
  boolean hasRead(String ns) {
    return namespaces.contains(ns);
  }

  /** Records every mount in the mountinfo text of namespace {@code ns}. */
  void learn(String ns, String mountinfo) {
    byte[] b = mountinfo.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    learn(ns, b, b.length);
  }

  /**
   * Records every mount in the first {@code length} bytes of a mountinfo text: only each line's
   * first and third fields ("36 35 98:0 ..."), read in place, since a host with thousands of
   * mounts has this read on every pass. A line that does not parse is skipped.
   */
  void learn(String ns, byte[] text, int length) {
    namespaces.add(ns);
    int line = 0;
    while (line < length) {
      int end = line;
      while (end < length && text[end] != '\n') {
        end++;
      }
      long id = number(text, line, end, ' ');
      int parent = id < 0 ? -1 : skipField(text, line, end);
      int devAt = parent < 0 ? -1 : skipField(text, parent, end);
      if (devAt >= 0) {
        long major = number(text, devAt, end, ':');
        int minorAt = major < 0 ? -1 : indexOf(text, devAt, end, ':') + 1;
        long minor = minorAt <= 0 ? -1 : number(text, minorAt, end, ' ');
        if (minor >= 0 && id <= Integer.MAX_VALUE && major <= Integer.MAX_VALUE && minor <= Integer.MAX_VALUE) {
          put((int) id, (int) major, (int) minor);
        }
      }
      line = end + 1;
    }
  }

  /** The decimal number at {@code at}, ended by {@code stop}; -1 if there is none. */
  private static long number(byte[] b, int at, int end, char stop) {
    long v = 0;
    int i = at;
    for (; i < end && b[i] >= '0' && b[i] <= '9' && i - at < 12; i++) {
      v = v * 10 + (b[i] - '0');
    }
    return i == at || i >= end || b[i] != stop ? -1 : v;
  }

  /** The start of the field after the one at {@code at}, or -1. */
  private static int skipField(byte[] b, int at, int end) {
    int space = indexOf(b, at, end, ' ');
    return space < 0 || space + 1 >= end ? -1 : space + 1;
  }

  private static int indexOf(byte[] b, int at, int end, char c) {
    for (int i = at; i < end; i++) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Records a mount that no mountinfo lists but whose device is known, such as the kernel's
   * internal tmpfs of every memfd: without it, each memfd would hold every watched file with its
   * inode number.
   */
  void internal(int mntId, Dev dev) {
    put(mntId, dev.major(), dev.minor());
  }

  private void put(int mntId, int major, int minor) {
    if (HolderScanner.contains(wanted, ((long) major << 32) | (minor & 0xffffffffL))) {
      devByMount.put(mntId, Dev.of(major, minor));
    } else {
      otherMounts.set(mntId);
    }
  }

  /** Marks {@code ns} as tried, when its mountinfo could not be read. */
  void tried(String ns) {
    namespaces.add(ns);
  }
}
