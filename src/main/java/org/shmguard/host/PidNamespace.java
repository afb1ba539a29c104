package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Tells whether shmguard runs in the host's PID namespace. Only there does /proc show every
 * process that could hold a segment; elsewhere (a container without hostPID) it must not reap.
 */
public final class PidNamespace {
  /** PROC_PID_INIT_INO: the inode the kernel gives the initial PID namespace (include/linux/proc_ns.h). */
  static final long INITIAL_PID_NS_INODE = 0xEFFFFFFCL;

  private PidNamespace() {}

  /** True when this process is in the initial PID namespace; false if it is not or cannot tell. */
  public static boolean isInitial() {
    return isInitial(Path.of("/proc/self/ns/pid"));
  }

  static boolean isInitial(Path nsLink) {
    try {
      String target = Files.readSymbolicLink(nsLink).toString(); // "pid:[4026531836]"
      int open = target.indexOf('[');
      int close = target.indexOf(']');
      return open > 0 && close > open && Long.parseLong(target.substring(open + 1, close)) == INITIAL_PID_NS_INODE;
    } catch (IOException | NumberFormatException e) {
      return false;
    }
  }
}
