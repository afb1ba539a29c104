package org.shmguard.host;

import java.nio.file.AccessDeniedException;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Posix;

/** Reads who a process is: command, uid and user, start time, container. Only for the few holders. */
public final class ProcessDetails {
  private final HostPaths paths;
  private final Posix posix;

  public ProcessDetails(HostPaths paths) {
    this(paths, Posix.get());
  }

  ProcessDetails(HostPaths paths, Posix posix) {
    this.paths = paths;
    this.posix = posix;
  }

  /** Details of {@code pid}, or null if it has gone. */
  public ProcessInfo read(int pid) {
    String p = Integer.toString(pid);
    try {
      String stat = ProcFiles.readOrNull(paths.proc(p, "stat"));
      String status = ProcFiles.readOrNull(paths.proc(p, "status"));
      if (stat == null || status == null) {
        return null;
      }
      String comm = ProcFiles.readOrNull(paths.proc(p, "comm"));
      String cgroup = ProcFiles.readOrNull(paths.proc(p, "cgroup"));
      int uid = parseUid(status);
      String user = uid < 0 ? null : posix.userName(uid).orElse(null);
      return new ProcessInfo(pid, comm == null ? commFromStat(stat) : comm.strip(), uid, user,
          ContainerLabel.fromCgroupFile(cgroup), startTicks(stat));
    } catch (AccessDeniedException e) {
      return new ProcessInfo(pid, "?", -1, null, null, -1);
    }
  }

  /** The container label of {@code pid}, or null. */
  public String container(int pid) {
    try {
      return ContainerLabel.fromCgroupFile(ProcFiles.readOrNull(paths.proc(Integer.toString(pid), "cgroup")));
    } catch (AccessDeniedException e) {
      return null;
    }
  }

  static int parseUid(String status) {
    int at = status.indexOf("\nUid:");
    if (at < 0) {
      return -1;
    }
    String[] f = status.substring(at + 5, status.indexOf('\n', at + 1)).trim().split("\\s+");
    try {
      return Integer.parseInt(f[0]);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Field 22 of /proc/PID/stat, counted after the command's closing parenthesis. */
  static long startTicks(String stat) {
    int close = stat.lastIndexOf(')');
    String[] f = stat.substring(close + 2).split(" ");
    // f[0] is field 3 (state); field 22 is f[19].
    try {
      return f.length > 19 ? Long.parseLong(f[19]) : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static String commFromStat(String stat) {
    int open = stat.indexOf('(');
    int close = stat.lastIndexOf(')');
    return open >= 0 && close > open ? stat.substring(open + 1, close) : "?";
  }
}
