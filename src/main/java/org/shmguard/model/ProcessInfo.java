package org.shmguard.model;

/**
 * What a person needs to know about a holder: who it is and where it runs.
 *
 * @param startTicks start time in clock ticks since boot (field 22 of /proc/PID/stat); with the
 *     pid it tells one process from a later one that reuses its pid
 * @param container a container, pod or batch job read from the cgroup path, or null
 */
public record ProcessInfo(int pid, String command, int uid, String user, String container, long startTicks) {
  /**
   * "282 python (alice, pod/train-0)"; a process shmguard could not read (it exited first, or
   * /proc would not say) is just "pid 282", never "282 ? (uid -1)".
   */
  public String describe() {
    if (!known()) {
      return "pid " + pid;
    }
    StringBuilder sb = new StringBuilder().append(pid).append(' ').append(command == null ? "?" : command);
    sb.append(" (").append(user != null ? user : "uid " + uid);
    if (container != null) {
      sb.append(", ").append(container);
    }
    return sb.append(')').toString();
  }

  /** False for a placeholder: a pid whose command and owner shmguard never read. */
  public boolean known() {
    return uid >= 0 || (command != null && !command.equals("?"));
  }
}
