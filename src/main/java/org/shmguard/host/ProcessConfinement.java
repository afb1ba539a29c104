package org.shmguard.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The capability sets and seccomp mode of one process, from the CapEff, CapBnd and Seccomp lines
 * of /proc/PID/status: enough to tell whether its container lets it make the NUMA memory-policy
 * calls (get_mempolicy, mbind, set_mempolicy) that NCCL's cuMem host memory needs. Docker's
 * default seccomp profile allows those calls only when CAP_SYS_NICE is in the container's
 * bounding set (moby profiles/seccomp/default.json; seccomp_linux.go tests
 * {@code rs.Process.Capabilities.Bounding}), so the bounding set decides, not the effective set
 * (a non-root job in a container given SYS_NICE has CapEff 0 and the calls all the same).
 *
 * <pre>{@code
 * ProcessConfinement c = ProcessConfinement.read(Path.of("/proc/self/status"));
 * c.numaPolicyAllowed();   // false in `docker run` without --cap-add SYS_NICE
 * }</pre>
 *
 * @param seccomp 0 none, 1 strict, 2 filter
 */
public record ProcessConfinement(long capEff, long capBnd, int seccomp) {
  /** CAP_SYS_NICE, capability number 23 (linux/capability.h). */
  public static final int CAP_SYS_NICE = 23;

  public ProcessConfinement {
    if (seccomp < 0 || seccomp > 2) {
      throw new IllegalArgumentException("seccomp mode must be 0, 1 or 2, not " + seccomp);
    }
  }

  /** Parses the text of /proc/PID/status; null when a line is missing or malformed. */
  public static ProcessConfinement parse(String status) {
    Long eff = null;
    Long bnd = null;
    Integer mode = null;
    for (String line : status.split("\n")) {
      int colon = line.indexOf(':');
      if (colon < 0) {
        continue;
      }
      String key = line.substring(0, colon);
      String value = line.substring(colon + 1).trim();
      try {
        switch (key) {
          case "CapEff" -> eff = Long.parseUnsignedLong(value, 16);
          case "CapBnd" -> bnd = Long.parseUnsignedLong(value, 16);
          case "Seccomp" -> mode = Integer.valueOf(value);
          default -> { }
        }
      } catch (NumberFormatException e) {
        return null;
      }
    }
    if (eff == null || bnd == null || mode == null || mode < 0 || mode > 2) {
      return null;
    }
    return new ProcessConfinement(eff, bnd, mode);
  }

  /** Reads a status file; null when it cannot be read (the process is gone, or no permission). */
  public static ProcessConfinement read(Path status) {
    try {
      return parse(Files.readString(status));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  public boolean boundingHasSysNice() {
    return (capBnd >>> CAP_SYS_NICE & 1) != 0;
  }

  /**
   * Whether the NUMA calls get through: always without a seccomp filter; with Docker's default
   * filter only when SYS_NICE is in the bounding set. Strict mode allows none. A custom profile
   * may differ: this is the default profiles' rule.
   */
  public boolean numaPolicyAllowed() {
    return seccomp == 0 || seccomp == 2 && boundingHasSysNice();
  }

  /** "seccomp filter, CAP_SYS_NICE not in the bounding set", for evidence lines. */
  public String describe() {
    String mode = seccomp == 0 ? "no seccomp filter" : seccomp == 1 ? "seccomp strict mode" : "a seccomp filter";
    return mode + ", CAP_SYS_NICE " + (boundingHasSysNice() ? "in" : "not in") + " the bounding set (CapBnd "
        + String.format("%016x", capBnd) + ", CapEff " + String.format("%016x", capEff) + ")";
  }
}
