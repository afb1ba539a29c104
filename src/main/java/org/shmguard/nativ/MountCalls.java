package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Platform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The calls that identify a mount and change one, through JNA: an O_PATH handle on a mount's
 * root, its mount id and device (statx), its capacity (fstatvfs), a size change through the new
 * mount API (fspick and fsconfig), and the user namespace that owns a mount namespace
 * and the uid that owns it (ioctl NS_GET_USERNS, NS_GET_OWNER_UID). Every number here is the generic Linux one, the same on x86_64 and
 * arm64 (asm-generic/unistd.h, linux/mount.h, linux/nsfs.h, linux/stat.h).
 *
 * <pre>{@code
 * try (MountHandle h = MountCalls.get().openMountRoot("/proc/42/root/dev/shm")) {
 *   if (h.identity().mountId() == judged) h.reconfigureSize(2L << 30);
 * }
 * }</pre>
 */
public final class MountCalls {
  static final long SYS_FSCONFIG = 431;
  static final long SYS_FSPICK = 433;
  static final int FSPICK_CLOEXEC = 0x1;
  static final int FSPICK_SYMLINK_NOFOLLOW = 0x2;
  static final int FSPICK_NO_AUTOMOUNT = 0x4;
  static final int FSPICK_EMPTY_PATH = 0x8;
  static final int FSCONFIG_SET_STRING = 1;
  static final int FSCONFIG_CMD_RECONFIGURE = 7;
  /** _IO(0xb7, 0x1): _IOC_NONE is 0, so the number is just type << 8 | nr. */
  static final long NS_GET_USERNS = 0xb701;
  /** _IO(0xb7, 0x4): the uid (in the caller's user namespace) that owns a user namespace, into a uid_t. */
  static final long NS_GET_OWNER_UID = 0xb704;
  static final int AT_EMPTY_PATH = 0x1000;
  static final int STATX_BASIC_STATS = 0x7ff;
  static final int STATX_MNT_ID = 0x1000;
  /** Linux 6.8: stx_mnt_id is then the mount's 64-bit id, which the kernel never gives another mount. */
  static final int STATX_MNT_ID_UNIQUE = 0x4000;
  static final long STATX_ATTR_MOUNT_ROOT = 0x2000;
  private static final int O_RDONLY = 0;
  private static final int O_PATH = 010000000;
  private static final int O_CLOEXEC = 0x80000;
  private static final int O_DIRECTORY = Platform.isARM() ? 0x4000 : 0x10000;
  private static final int O_NOFOLLOW = Platform.isARM() ? 0x8000 : 0x20000;

  interface LibC extends Library {
    int open(byte[] path, int flags) throws LastErrorException;

    int close(int fd) throws LastErrorException;

    int ioctl(int fd, NativeLong request) throws LastErrorException;

    int ioctl(int fd, NativeLong request, int[] out) throws LastErrorException;

    int statx(int dirfd, byte[] path, int flags, int mask, Memory buf) throws LastErrorException;

    int fstatvfs(int fd, Memory buf) throws LastErrorException;

    NativeLong syscall(NativeLong number, Object... args) throws LastErrorException;
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
   * An O_PATH handle on the directory {@code path} leads to, not following a link in its last
   * component. It reads nothing and runs no filesystem code; what it is open on is checked with
   * {@link MountHandle#identity()} before anything is done through it.
   */
  public MountHandle openMountRoot(String path) throws IOException {
    try {
      return new MountHandle(this, libc.open(Linux.cString(path), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), path);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + path, e);
    }
  }

  /**
   * The user namespace that owns the mount namespace {@code nsPath} (a /proc/PID/ns/mnt link),
   * as the nsfs inode that identifies it.
   */
  public NsId ownerOfMountNamespace(String nsPath) throws IOException {
    return mountNamespaceOwner(nsPath).userNamespace();
  }

  /**
   * The user namespace that owns the mount namespace {@code nsPath}, and the uid that owns that
   * user namespace (the user who made it, as shmguard's own user namespace numbers users: 0 for
   * the host's; null on a kernel that cannot say, before 4.11).
   */
  public Owner mountNamespaceOwner(String nsPath) throws IOException {
    int ns;
    try {
      ns = libc.open(Linux.cString(nsPath), O_RDONLY | O_CLOEXEC);
    } catch (LastErrorException e) {
      throw NativeErrors.io("open " + nsPath, e);
    }
    try {
      int owner = libc.ioctl(ns, new NativeLong(NS_GET_USERNS));
      try {
        MountIdentity id = identity(owner, nsPath + " owner");
        int[] uid = {-1};
        Long ownerUid;
        try {
          libc.ioctl(owner, new NativeLong(NS_GET_OWNER_UID), uid);
          ownerUid = Integer.toUnsignedLong(uid[0]);
        } catch (LastErrorException e) {
          ownerUid = null; // a kernel before 4.11 cannot say; the namespace itself is still known
        }
        return new Owner(new NsId(id.devMajor(), id.devMinor(), id.ino()), ownerUid);
      } finally {
        close(owner);
      }
    } catch (LastErrorException e) {
      throw NativeErrors.io("ioctl NS_GET_USERNS on " + nsPath, e);
    } finally {
      close(ns);
    }
  }

  /** A mount namespace's owner: its user namespace, and the uid that made that user namespace (null: unknown). */
  public record Owner(NsId userNamespace, Long uid) {}

  /** The namespace a /proc/PID/ns/* link leads to, as its nsfs inode. */
  public NsId namespaceOf(String nsPath) throws IOException {
    StatxResult st = Linux.get().stat(nsPath);
    return new NsId(st.devMajor(), st.devMinor(), st.ino());
  }

  /** Identity of a namespace: the device and inode of its nsfs file. */
  public record NsId(int devMajor, int devMinor, long ino) {
    @Override
    public String toString() {
      return "ns:[" + ino + "]";
    }
  }

  MountIdentity identity(int fd, String what) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    buf.clear();
    try {
      libc.statx(fd, new byte[] {0}, AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx of " + what, e);
    }
    StatxResult st = StatxResult.read(buf);
    int mask = buf.getInt(0);
    long attributes = buf.getLong(8);
    long attributesMask = buf.getLong(56);
    long mountId = (mask & STATX_MNT_ID) != 0 ? buf.getLong(144) : mountIdFromFdinfo(fd, what);
    boolean mountRoot = (attributesMask & STATX_ATTR_MOUNT_ROOT) != 0
        ? (attributes & STATX_ATTR_MOUNT_ROOT) != 0
        : parentIsAnotherMount(fd, mountId, what);
    return new MountIdentity(mountId, st.devMajor(), st.devMinor(), st.ino(), mountRoot, st.isDirectory());
  }

  /** Kernels before 5.8 have no STATX_MNT_ID; /proc/self/fdinfo has named the mount since 3.15. */
  private static long mountIdFromFdinfo(int fd, String what) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd))) {
      if (line.startsWith("mnt_id:")) {
        return Long.parseLong(line.substring("mnt_id:".length()).trim());
      }
    }
    throw new IOException("cannot tell which mount " + what + " is on: no mnt_id in /proc/self/fdinfo");
  }

  /** Without STATX_ATTR_MOUNT_ROOT (before 5.8): a directory whose ".." is on another mount is a mount's root. */
  private boolean parentIsAnotherMount(int fd, long mountId, String what) throws IOException {
    // openat is not bound here; "fd/.." through /proc/self/fd leads to the parent of the handle's directory.
    try {
      int parent = libc.open(Linux.cString("/proc/self/fd/" + fd + "/.."), O_PATH | O_DIRECTORY | O_CLOEXEC);
      try {
        return identityMountId(parent, what) != mountId;
      } finally {
        close(parent);
      }
    } catch (LastErrorException e) {
      throw NativeErrors.io("open the parent of " + what, e);
    }
  }

  private long identityMountId(int fd, String what) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    buf.clear();
    try {
      libc.statx(fd, new byte[] {0}, AT_EMPTY_PATH, STATX_MNT_ID, buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx of " + what, e);
    }
    return (buf.getInt(0) & STATX_MNT_ID) != 0 ? buf.getLong(144) : mountIdFromFdinfo(fd, what);
  }

  /**
   * The unique id of the mount {@code fd} is on (STATX_MNT_ID_UNIQUE), or 0 where the kernel has
   * none (before 6.8): unlike the id mountinfo lists, it is never reused for a later mount.
   */
  long uniqueMountId(int fd, String what) throws IOException {
    Memory buf = new Memory(StatxResult.SIZE);
    buf.clear();
    try {
      libc.statx(fd, new byte[] {0}, AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statx of " + what, e);
    }
    return (buf.getInt(0) & STATX_MNT_ID_UNIQUE) != 0 ? buf.getLong(144) : 0;
  }

  FsUsage fstatvfs(int fd, String what) throws IOException {
    Memory buf = new Memory(FsUsage.STRUCT_SIZE);
    buf.clear();
    try {
      libc.fstatvfs(fd, buf);
      return FsUsage.read(buf);
    } catch (LastErrorException e) {
      throw NativeErrors.io("statvfs " + what, e);
    }
  }

  /**
   * Sets the size of the superblock the handle's mount shows and nothing else: fspick opens a
   * reconfiguration context of that very superblock (it refuses a path that is not a mount's
   * root), fsconfig sets one parameter and applies it. No mount flag is passed, so none changes:
   * a reconfiguration without flags cannot make anything read-only.
   */
  void reconfigureSize(int fd, long bytes, String what) throws IOException {
    int fs;
    try {
      fs = libc.syscall(new NativeLong(SYS_FSPICK), fd, new byte[] {0},
          FSPICK_EMPTY_PATH | FSPICK_CLOEXEC | FSPICK_SYMLINK_NOFOLLOW | FSPICK_NO_AUTOMOUNT).intValue();
    } catch (LastErrorException e) {
      throw NativeErrors.io("fspick " + what, e);
    }
    try {
      libc.syscall(new NativeLong(SYS_FSCONFIG), fs, FSCONFIG_SET_STRING, Linux.cString("size"),
          Linux.cString(Long.toString(bytes)), 0);
      libc.syscall(new NativeLong(SYS_FSCONFIG), fs, FSCONFIG_CMD_RECONFIGURE, null, null, 0);
    } catch (LastErrorException e) {
      throw NativeErrors.io("fsconfig size=" + bytes + " on " + what, e);
    } finally {
      close(fs);
    }
  }

  void close(int fd) {
    try {
      libc.close(fd);
    } catch (LastErrorException ignored) {
      // nothing to act on: the handle was read-only
    }
  }
}
