package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import java.io.IOException;
import java.util.Locale;
import java.util.Set;

/**
 * mount(2) with MS_REMOUNT, through JNA: the one call shmguard makes to change a mount. The flag
 * values are the generic Linux ones, the same on x86_64 and arm64.
 *
 * <pre>{@code
 * MountCalls.get().remount("/dev/shm", Set.of("nosuid", "nodev"), "size=2147483648");
 * }</pre>
 */
public final class MountCalls {
  private static final long MS_RDONLY = 1;
  private static final long MS_NOSUID = 2;
  private static final long MS_NODEV = 4;
  private static final long MS_NOEXEC = 8;
  private static final long MS_SYNCHRONOUS = 16;
  private static final long MS_REMOUNT = 32;
  private static final long MS_MANDLOCK = 64;
  private static final long MS_DIRSYNC = 128;
  private static final long MS_NOSYMFOLLOW = 256;
  private static final long MS_LAZYTIME = 1L << 25;

  interface LibC extends Library {
    int mount(byte[] source, byte[] target, byte[] fstype, NativeLong flags, byte[] data) throws LastErrorException;
  }

  private static final class Holder {
    static final MountCalls INSTANCE = new MountCalls(Native.load("c", LibC.class));
  }

  private final LibC libc;

  private MountCalls(LibC libc) {
    this.libc = libc;
  }

  public static MountCalls get() {
    return Holder.INSTANCE;
  }

  /**
   * Remounts the mount at {@code target} with {@code data} (filesystem options to change, such as
   * "size=..."), passing again the flags named in {@code keptFlags} (mountinfo's words: ro,
   * nosuid, nodev, noexec, nosymfollow, sync, dirsync, lazytime, mand), since MS_REMOUNT clears
   * every such flag it is not given. Access-time flags are left out on purpose: the kernel keeps
   * them when none is given.
   */
  public void remount(String target, Set<String> keptFlags, String data) throws IOException {
    try {
      libc.mount(Linux.cString("none"), Linux.cString(target), null, new NativeLong(MS_REMOUNT | flags(keptFlags)),
          Linux.cString(data));
    } catch (LastErrorException e) {
      throw NativeErrors.io("mount -o remount," + data + " " + target, e);
    }
  }

  /** The MS_* bits of mountinfo's option words; words that are not such flags count for nothing. */
  static long flags(Set<String> words) {
    long f = 0;
    for (String w : words) {
      f |= switch (w.toLowerCase(Locale.ROOT)) {
        case "ro" -> MS_RDONLY;
        case "nosuid" -> MS_NOSUID;
        case "nodev" -> MS_NODEV;
        case "noexec" -> MS_NOEXEC;
        case "sync" -> MS_SYNCHRONOUS;
        case "mand" -> MS_MANDLOCK;
        case "dirsync" -> MS_DIRSYNC;
        case "nosymfollow" -> MS_NOSYMFOLLOW;
        case "lazytime" -> MS_LAZYTIME;
        default -> 0L;
      };
    }
    return f;
  }

  /** The words {@link #remount} passes on again; the rest of mountinfo's options it leaves to the kernel. */
  public static final Set<String> KEPT_FLAGS = Set.of("ro", "nosuid", "nodev", "noexec", "sync", "mand", "dirsync",
      "nosymfollow", "lazytime");
}
