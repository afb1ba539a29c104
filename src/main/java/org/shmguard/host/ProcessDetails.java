package org.shmguard.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.shmguard.model.ProcessInfo;
import org.shmguard.nativ.Posix;
import org.shmguard.nativ.ProcCalls;

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
  private ProcCalls proc;
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
      ProcCalls proc = proc();
      int length = proc == null ? -ProcCalls.ENOENT : proc.readWholeRecordFile(pid, "stat");
      if (length < 0) {
        if (length == -ProcCalls.ENOENT || length == -ProcCalls.ESRCH) {
          seen.remove(pid);
          return null;
        }
        throw new AccessDeniedException(paths.proc(p, "stat").toString());
      }
      // The command in stat is the one /proc/PID/comm shows (the task's comm), in parentheses.
      // Parsed from the bytes: the daemon reads every holder's stat on every pass.
      byte[] stat = proc.bytes();
      String comm = commFromStat(stat, length);
      long start = startTicks(stat, length);
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

  /** A handle on /proc kept for the life of this object (one descriptor), or null if it cannot be opened. */
  private ProcCalls proc() {
    if (proc == null) {
      try {
        proc = ProcCalls.open(paths.proc().toString());
      } catch (IOException e) {
        return null;
      }
    }
    return proc;
  }

  /** The container label of {@code pid}, or null. */
  public String container(int pid) {
    try {
      return ContainerLabel.fromCgroupFile(ProcFiles.readOrNull(paths.proc(Integer.toString(pid), "cgroup")));
    } catch (AccessDeniedException e) {
      return null;
    }
  }

  /** The real uid of a status text, or -1. */
  static int parseUid(String status) {
    int[] uids = uids(status);
    return uids == null ? -1 : uids[0];
  }

  /**
   * The four uids of a status text's {@code Uid:} line: real, effective, saved, filesystem (as the
   * host's user namespace maps them); null when it has no such line of four numbers.
   */
  static int[] uids(String status) {
    int at = status.indexOf("\nUid:");
    if (at < 0) {
      return null;
    }
    int end = status.indexOf('\n', at + 1);
    String[] f = status.substring(at + 5, end < 0 ? status.length() : end).trim().split("\\s+");
    if (f.length < 4) {
      return null;
    }
    int[] uids = new int[4];
    try {
      for (int i = 0; i < 4; i++) {
        uids[i] = (int) Long.parseLong(f[i]); // 4294967294 is uid -2, as the kernel's 32-bit uid_t
      }
    } catch (NumberFormatException e) {
      return null;
    }
    return uids;
  }

  /** USER_HZ, the unit of /proc/PID/stat's start time: 100 on every architecture Linux runs GPUs on. */
  static final long TICKS_PER_SECOND = 100;

  /**
   * When the machine booted, in wall-clock nanoseconds: {@code now} less /proc/uptime (which counts
   * time asleep, as process start times do); -1 when it cannot be read.
   */
  static long bootNanos(HostPaths paths, java.time.Instant now) {
    try {
      String uptime = ProcFiles.readOrNull(paths.proc("uptime"));
      if (uptime == null) {
        return -1;
      }
      long upNanos = new java.math.BigDecimal(uptime.trim().split("\\s+")[0]).movePointRight(9).longValueExact();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano() - upNanos;
    } catch (AccessDeniedException | RuntimeException e) {
      return -1;
    }
  }

  /** A start time in clock ticks since boot as wall-clock nanoseconds; -1 when either is unknown. */
  static long startNanos(long bootNanos, long ticks) {
    return ticks < 0 || bootNanos < 0 ? -1 : bootNanos + ticks * (1_000_000_000L / TICKS_PER_SECOND);
  }

  /** Field 22 of /proc/PID/stat, counted after the command's closing parenthesis. */
  static long startTicks(String stat) {
    byte[] b = stat.getBytes(StandardCharsets.UTF_8);
    return startTicks(b, b.length);
  }

  /** Field 22 of the stat bytes: the 20th space after the command's closing parenthesis starts it. */
  static long startTicks(byte[] stat, int length) {
    int i = lastIndexOf(stat, length, (byte) ')');
    if (i < 0) {
      return -1;
    }
    int spaces = 0;
    for (i++; i < length && spaces < 20; i++) {
      if (stat[i] == ' ') {
        spaces++;
      }
    }
    long v = 0;
    int digits = 0;
    for (; i < length && stat[i] >= '0' && stat[i] <= '9' && digits < 19; i++, digits++) {
      v = v * 10 + (stat[i] - '0');
    }
    return spaces == 20 && digits > 0 ? v : -1;
  }

  private static String commFromStat(byte[] stat, int length) {
    int open = -1;
    for (int i = 0; i < length; i++) {
      if (stat[i] == '(') {
        open = i;
        break;
      }
    }
    int close = lastIndexOf(stat, length, (byte) ')');
    return open >= 0 && close > open ? new String(stat, open + 1, close - open - 1, StandardCharsets.UTF_8) : "?";
  }

  private static int lastIndexOf(byte[] b, int length, byte c) {
    for (int i = length - 1; i >= 0; i--) {
      if (b[i] == c) {
        return i;
      }
    }
    return -1;
  }
}
