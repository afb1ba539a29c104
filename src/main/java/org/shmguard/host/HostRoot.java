package org.shmguard.host;

import java.io.IOException;
import org.shmguard.nativ.ProcCalls;
import org.shmguard.nativ.SocketPeer;

/**
 * Whether a process with uid 0 is root of the host, as shmguard is: in shmguard's own user, mount
 * and PID namespaces, or in those of process 1 of shmguard's PID namespace (each compared by the
 * device and inode of its /proc/PID/ns link; all three from the same one of the two). Root in a
 * container without a user namespace has uid 0 too, but its own mount and PID namespaces; it must
 * not steer what the host's root does. Process 1 counts because shmguard run as a Kubernetes
 * DaemonSet (hostPID, a mount namespace of its pod's) shares the node's PID namespace, whose
 * process 1 is the node's init: the node's root (an OCI hook the runtime runs) is root of the
 * host, the pod's mount namespace notwithstanding. Run by systemd, both are the same namespaces.
 *
 * <p>The pid must be the process meant: the caller holds a pidfd for it, and {@link #whyNot}
 * checks after reading /proc/PID that the pidfd's process is still unreaped (so the pid was its
 * own throughout the reads: the kernel frees a pid only when its process is reaped). Not
 * thread-safe: one caller (the advice socket's acceptor).
 *
 * <pre>{@code
 * HostRoot host = HostRoot.open();
 * String why = host.whyNot(pid, pidfd, -1);   // null: root of the host
 * }</pre>
 */
public final class HostRoot implements AutoCloseable {
  private static final String[] NAMESPACES = {"user", "mnt", "pid"};
  private static final String[] NAMED = {"user", "mount", "PID"};
  private final ProcCalls proc;
  /** Device major, minor and inode of shmguard's own user, mount and PID namespace, in that order. */
  private final long[][] own = new long[NAMESPACES.length][];
  /** The same of process 1 of shmguard's PID namespace; null where it could not be read. */
  private long[][] init = new long[NAMESPACES.length][];
  /** The errno of the last namespace that could not be read. */
  private int errno;
  private boolean closed;

  private HostRoot(ProcCalls proc) {
    this.proc = proc;
  }

  /** Reads shmguard's own namespaces; fails if /proc cannot say them. */
  public static HostRoot open() throws IOException {
    return open("self");
  }

  /** As {@link #open}, as if shmguard were process {@code self} (tests: a daemon in a mount namespace of its own). */
  static HostRoot open(String self) throws IOException {
    ProcCalls proc = ProcCalls.open("/proc");
    HostRoot h = new HostRoot(proc);
    try {
      for (int i = 0; i < NAMESPACES.length; i++) {
        h.own[i] = h.namespace(self, NAMESPACES[i]);
        if (h.own[i] == null) {
          throw new IOException("cannot read /proc/" + self + "/ns/" + NAMESPACES[i] + " (errno " + h.errno + ")");
        }
        h.init[i] = h.namespace("1", NAMESPACES[i]);
        if (h.init[i] == null) {
          h.init = null; // then only shmguard's own namespaces count
          break;
        }
      }
      return h;
    } catch (IOException | RuntimeException e) {
      proc.close();
      throw e;
    }
  }

  /**
   * Null when process {@code pid} (uid 0) is root of the host, else why not, as a clause ("it is
   * root in another mount namespace"). {@code pidfd} is a pidfd for the process meant;
   * {@code startedBy} (ticks since boot, as /proc/PID/stat counts them), when not negative, is a
   * time the process must have started by, for a pidfd opened by pid rather than given by the
   * kernel for the connection. Anything that cannot be read or checked is a reason.
   */
  public synchronized String whyNot(int pid, int pidfd, long startedBy) {
    if (closed) {
      return "shmguard is stopping";
    }
    if (pid <= 0) {
      return "the kernel did not say which process it is";
    }
    if (startedBy >= 0) {
      int n = proc.readWholeRecordFile(pid, "stat");
      long start = n > 0 ? ProcessDetails.startTicks(proc.bytes(), n) : -1;
      if (start < 0) {
        return "its process " + pid + " could not be read";
      }
      if (start > startedBy) {
        return "pid " + pid + " is a process that started after the connection was made";
      }
    }
    long[][] theirs = new long[NAMESPACES.length][];
    for (int i = 0; i < NAMESPACES.length; i++) {
      theirs[i] = namespace(Integer.toString(pid), NAMESPACES[i]);
      if (theirs[i] == null) {
        return "the namespaces of its process " + pid + " could not be read (errno " + errno + ")";
      }
    }
    String differs = differs(theirs, own);
    if (differs != null && init != null && differs(theirs, init) == null) {
      differs = null;
    }
    if (differs != null) {
      return differs;
    }
    if (!SocketPeer.unreaped(pidfd)) {
      return "its process " + pid + " ended before its namespaces were checked";
    }
    return null;
  }

  /** Null when {@code theirs} are all {@code ours}, else the first that differs, as a clause. */
  private static String differs(long[][] theirs, long[][] ours) {
    for (int i = 0; i < NAMESPACES.length; i++) {
      if (!java.util.Arrays.equals(theirs[i], ours[i])) {
        return "it is root in another " + NAMED[i] + " namespace";
      }
    }
    return null;
  }

  private long[] namespace(String process, String name) {
    int r = proc.stat(process + "/ns/" + name);
    if (r < 0) {
      errno = -r;
      return null;
    }
    return new long[] {proc.devMajor(), proc.devMinor(), proc.ino()};
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      proc.close();
    }
  }
}
