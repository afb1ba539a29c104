package org.shmguard.doctor;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.shmguard.host.HostPaths;

/**
 * Whether the shmguard daemon is up, as a client sees it: its advice socket exists and accepts a
 * connection, and its pid file (if any) names a live process. It sends nothing: the protocol
 * belongs to the advice server.
 */
@FunctionalInterface
public interface DaemonProbe {
  String PID_FILE = "/run/shmguard/shmguard.pid";

  Status probe();

  /**
   * What the probe saw.
   *
   * @param error why a connection failed, or null
   * @param pid the pid in the pid file, or null when there is none
   */
  record Status(String socket, boolean socketExists, boolean accepts, String error, Integer pid, boolean pidAlive) {}

  /** Probes {@code socketPath} (the configuration's {@code advice.socket}) and the pid file under {@code paths}. */
  static DaemonProbe at(HostPaths paths, Path socketPath) {
    return () -> {
      Path socket = Path.of(paths.resolve(socketPath.toString()));
      boolean exists = Files.exists(socket);
      boolean accepts = false;
      String error = null;
      if (exists) {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
          ch.connect(UnixDomainSocketAddress.of(socket));
          accepts = true;
        } catch (IOException | UnsupportedOperationException e) {
          error = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
      }
      Integer pid = null;
      boolean alive = false;
      try {
        pid = Integer.valueOf(Files.readString(Path.of(paths.resolve(PID_FILE))).strip());
        alive = Files.isDirectory(paths.proc(pid.toString()));
      } catch (IOException | NumberFormatException e) {
        // no pid file, or not a number: the socket decides
      }
      return new Status(socket.toString(), exists, accepts, error, pid, alive);
    };
  }
}
