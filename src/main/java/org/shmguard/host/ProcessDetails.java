package org.shmguard.host;

import java.nio.file.AccessDeniedException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Posix;

/**
 * Reads who a process is: command, uid and user, start time, container. Only for the few holders.
 *
 * <p>Every read takes /proc/PID/stat (command and start time). The uid and the container, from
 * /proc/PID/status and /proc/PID/cgroup, are read once per process: while a pid shows the same start
 * time and command, it is the same process that was read before, and the daemon, which asks about
 * the same holders pass after pass, reads one small file per holder instead of three. (A process
 * that changes its uid or cgroup without exec keeps the labels it first had; labels are for people,
 * and no verdict rests on them.)
 */
public final class ProcessDetails {
  /** Enough for every holder on a large host; the least recently asked about go first. */
  private static final int REMEMBERED = 8192;

  private final HostPaths paths;
  private final Posix posix;
  private final Map<Integer, ProcessInfo> seen = new LinkedHashMap<>(256, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Integer, ProcessInfo> eldest) {
      return size() > REMEMBERED;
    }
  };

  public ProcessDetails(HostPaths paths) {
    this(paths, Posix.get());
  }

  ProcessDetails(HostPaths paths, Posix posix) {
    this.paths = paths;
    this.posix = posix;
  }

  /** Details of {@code pid}, or null if it has gone. */
  public synchronized ProcessInfo read(int pid) {
    String p = Integer.toString(pid);
    try {
      String stat = ProcFiles.readOrNull(paths.proc(p, "stat"));
      if (stat == null) {
        seen.remove(pid);
        return null;
      }
      // The command in stat is the one /proc/PID/comm shows (the task's comm), in parentheses.
      String comm = commFromStat(stat);
      long start = startTicks(stat);
      ProcessInfo known = seen.get(pid);
      if (known != null && known.startTicks() == start && start >= 0 && known.command().equals(comm)) {
        return known;
      }
      String status = ProcFiles.readOrNull(paths.proc(p, "status"));
      if (status == null) {
        seen.remove(pid);
        return null;
      }
      String cgroup = ProcFiles.readOrNull(paths.proc(p, "cgroup"));
      int uid = parseUid(status);
      String user = uid < 0 ? null : posix.userName(uid).orElse(null);
      ProcessInfo info = new ProcessInfo(pid, comm, uid, user, ContainerLabel.fromCgroupFile(cgroup), start);
      seen.put(pid, info);
      return info;
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
