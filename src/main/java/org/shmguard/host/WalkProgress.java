package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Whether a walk's thread makes progress, from the kernel's view of it (/proc/self/task/TID),
 * looked at a few times per deadline: a thread that ran or waited for a CPU since the last look
 * (its schedstat on-CPU and run-queue times moved), is runnable, or waits on a lock of the JVM's
 * own (futex: a safepoint on a busy host) is not waiting on a filesystem; one asleep in any other
 * system call with neither time moving is. A CPU-starved host's walk of its tmpfs is slow, never
 * asleep; a FUSE or NFS walk whose server stopped answering sleeps in its stat or open and never
 * runs again.
 *
 * <pre>{@code
 * WalkProgress p = new WalkProgress(System.nanoTime());  // the walk's thread calls p.begin() first
 * p.look(System.nanoTime());                             // the waiting thread, a few times per deadline
 * if (p.stillSince(now) >= deadline / 2) { ... stalled ... }
 * }</pre>
 */
final class WalkProgress {
  /** futex(2): 202 on x86_64, 98 on aarch64; a wait on a lock, not on a filesystem. */
  private static final long FUTEX = System.getProperty("os.arch").contains("aarch64") ? 98 : 202;
  private static final ThreadLocal<String> TID = ThreadLocal.withInitial(WalkProgress::ownTid);

  private volatile String tid;
  private String lastTimes;
  private long lastProgress;

  WalkProgress(long startedNanos) {
    this.lastProgress = startedNanos;
  }

  /** Called by the walk's thread before it walks: which thread to look at. */
  void begin() {
    tid = TID.get();
  }

  /** One look at the walk's thread; progress seen moves {@link #stillSince}'s start to {@code now}. */
  synchronized void look(long now) {
    String t = tid;
    if (t == null) {
      lastProgress = now; // not started: no thread for it yet, on a host too busy to start one
      return;
    }
    try {
      Path task = Path.of("/proc/self/task", t);
      String times = Files.readString(task.resolve("schedstat")).strip(); // on-CPU ns, run-queue ns, timeslices
      String syscall = Files.readString(task.resolve("syscall")).strip();
      boolean moved = lastTimes != null && !times.equals(lastTimes);
      lastTimes = times;
      if (moved || syscall.equals("running") || syscall.startsWith(FUTEX + " ") || state(task) == 'R') {
        lastProgress = now;
      }
    } catch (IOException | RuntimeException e) {
      // no /proc to ask: no progress seen, so the deadline alone decides, as before
    }
  }

  /** Nanoseconds since the walk last showed progress (or started). */
  synchronized long stillSince(long now) {
    return now - lastProgress;
  }

  private static char state(Path task) throws IOException {
    String stat = Files.readString(task.resolve("stat"));
    return stat.charAt(stat.lastIndexOf(')') + 2);
  }

  private static String ownTid() {
    try {
      return Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
    } catch (IOException | UnsupportedOperationException e) {
      return null;
    }
  }
}
