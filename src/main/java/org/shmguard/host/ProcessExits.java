package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import org.shmguard.model.ProcessInfo;

/**
 * Whether a process a pass saw (pid and start time) has gone: its {@code /proc/PID/stat} is gone,
 * names a process with another start time (the pid was reused), or names a zombie with no thread
 * left (it holds no fd and no mapping; only its parent's wait is missing). A group leader that
 * exited while its threads run shows as a zombie with more than one thread: alive. Anything that
 * cannot be read counts as alive.
 *
 * <pre>{@code
 * boolean gone = new ProcessExits(HostPaths.system()).gone(info);
 * }</pre>
 */
public final class ProcessExits {
  private final HostPaths paths;

  public ProcessExits(HostPaths paths) {
    this.paths = paths;
  }

  public boolean gone(ProcessInfo seen) {
    String stat;
    try {
      stat = new String(Files.readAllBytes(paths.proc(Integer.toString(seen.pid()), "stat")), StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      return true;
    } catch (IOException e) {
      return "ESRCH".equals(e.getMessage()) || e.getMessage() != null && e.getMessage().contains("No such process");
    }
    return goneByStat(stat, seen.startTicks());
  }

  /** The same from the text of a {@code /proc/PID/stat}. */
  static boolean goneByStat(String stat, long startTicks) {
    int close = stat.lastIndexOf(')');
    if (close < 0) {
      return false;
    }
    String[] f = stat.substring(close + 2).trim().split(" ");
    if (f.length < 20) {
      return false;
    }
    long start;
    int threads;
    try {
      start = Long.parseLong(f[19]); // field 22, starttime
      threads = Integer.parseInt(f[17]); // field 20, num_threads
    } catch (NumberFormatException e) {
      return false;
    }
    if (start != startTicks) {
      return true;
    }
    char state = f[0].isEmpty() ? '?' : f[0].charAt(0);
    return (state == 'Z' || state == 'X') && threads <= 1;
  }
}
