package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * The calls of the reaper's last check (openat, fcntl, renameat2, unlinkat), through JNA's direct
 * mapping: they are made several times per reaped file, and the interface mapping's proxy and
 * reflective dispatch cost more than the calls themselves (as for {@link DirectStatx}). A reap of
 * a few thousand leaked files, as after a crash of a large job, pays it thousands of times.
 */
final class DirectFileCalls {
  static {
    Native.register(DirectFileCalls.class, NativeLibrary.getInstance("c"));
  }

  private DirectFileCalls() {}

  static native int openat(int dirfd, byte[] name, int flags) throws LastErrorException;

  static native int renameat2(int olddirfd, byte[] oldname, int newdirfd, byte[] newname, int flags)
      throws LastErrorException;

  static native int unlinkat(int dirfd, byte[] name, int flags) throws LastErrorException;

  /** fcntl(2) with an int argument (the commands used here all take one, or none). */
  static native int fcntl(int fd, int cmd, int arg) throws LastErrorException;

  static native int close(int fd) throws LastErrorException;
}
