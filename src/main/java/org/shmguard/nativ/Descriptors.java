package org.shmguard.nativ;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import java.io.IOException;

/**
 * dup2(2), through JNA: moves a descriptor systemd passed (fd 3, the sd_listen_fds protocol) to
 * standard input, the one descriptor the JDK can adopt as a channel (System.inheritedChannel).
 */
public final class Descriptors {
  interface LibC extends Library {
    int dup2(int oldfd, int newfd) throws LastErrorException;
  }

  private static final class Holder {
    static final LibC LIBC = Native.load("c", LibC.class);
  }

  private Descriptors() {}

  public static void dup2(int from, int to) throws IOException {
    try {
      Holder.LIBC.dup2(from, to);
    } catch (LastErrorException e) {
      throw NativeErrors.io("dup2 " + from + " " + to, e);
    }
  }
}
