package org.shmguard.model;

/**
 * What a person needs to know about a holder: who it is and where it runs.
 *
 * @param startTicks start time in clock ticks since boot (field 22 of /proc/PID/stat); with the
 *     pid it tells one process from a later one that reuses its pid
 * @param container a container, pod or batch job read from the cgroup path, or null
 */
public record ProcessInfo(int pid, String command, int uid, String user, String container, long startTicks) {
  public String describe() {
    StringBuilder sb = new StringBuilder().append(pid).append(' ').append(command == null ? "?" : command);
    sb.append(" (").append(user != null ? user : "uid " + uid);
    if (container != null) {
      sb.append(", ").append(container);
    }
    return sb.append(')').toString();
  }
}
