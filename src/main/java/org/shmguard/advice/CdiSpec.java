package org.shmguard.advice;

import java.nio.file.Path;

/**
 * The CDI (Container Device Interface) spec that gives a container the advice socket:
 * kind {@code shmguard.io/advice}, one device {@code socket}, whose edits bind-mount the socket's
 * directory read-only at the same path and set {@code SHMGUARD_ADVICE_SOCKET}, which
 * shmguard-launch, the python client and {@code shmguard advise} read. The directory, not the
 * socket file, so that a restarted daemon's new socket shows through. CDI spec version 0.3.0, the
 * oldest with mounts and env, so that every runtime that reads CDI (podman 4.1+, Docker 25+,
 * containerd 1.7+, CRI-O 1.23+) takes it.
 *
 * <pre>{@code
 * String yaml = CdiSpec.yaml(Path.of("/run/shmguard/advice.sock"));
 * }</pre>
 */
public final class CdiSpec {
  public static final String KIND = "shmguard.io/advice";
  public static final String DEVICE = "socket";
  public static final String VERSION = "0.3.0";

  private CdiSpec() {}

  /** The spec for a daemon whose socket is {@code socket}, as YAML. */
  public static String yaml(Path socket) {
    Path dir = socket.toAbsolutePath().normalize().getParent();
    if (dir == null || dir.getParent() == null) {
      throw new IllegalArgumentException("the advice socket " + socket + " must be in a directory of its own, not in /");
    }
    return "# The shmguard advice socket for containers, as `shmguard cdi generate` writes it.\n"
        + "# A container started with --device " + KIND + "=" + DEVICE + " gets " + dir + " read-only and\n"
        + "# SHMGUARD_ADVICE_SOCKET, so shmguard-launch and the python client inside it find the daemon.\n"
        + "cdiVersion: \"" + VERSION + "\"\n"
        + "kind: " + KIND + "\n"
        + "devices:\n"
        + "  - name: " + DEVICE + "\n"
        + "    containerEdits:\n"
        + "      env:\n"
        + "        - " + quoted("SHMGUARD_ADVICE_SOCKET=" + socket.toAbsolutePath().normalize()) + "\n"
        + "      mounts:\n"
        + "        - hostPath: " + quoted(dir.toString()) + "\n"
        + "          containerPath: " + quoted(dir.toString()) + "\n"
        + "          options: [ro, nosuid, nodev, noexec, rbind]\n";
  }

  /** A YAML double-quoted scalar: a path may hold what a plain one cannot (": ", " #"). */
  private static String quoted(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      if (c < 0x20 || c == 0x7f) {
        sb.append(String.format("\\x%02x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }
}
