package org.shmguard.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.shmguard.advice.AdviceClient;
import org.shmguard.advice.ProtocolException;
import org.shmguard.config.Config;

/**
 * What the running daemon answers for a command that would otherwise make a /proc pass of its own
 * ({@code scan}, {@code check}), or why it does not: the command then scans here. The daemon's
 * last pass applies only to the command as run without options that change what is scanned
 * ({@code --config}, {@code --host-root}); {@code --local} always scans here.
 *
 * <pre>{@code
 * DaemonAnswer a = DaemonAnswer.ask(common, config, local, "CHECK v1", false);
 * if (a.answered()) { ... a.body() ... } else { ... scan here, say a.whyNot() ... }
 * }</pre>
 */
record DaemonAnswer(String body, String whyNot) {
  /** One deadline for connect, request and reply: a daemon renders a large pass in well under a second. */
  static final Duration TIMEOUT = Duration.ofSeconds(5);
  /** A scan of many containers' mounts is megabytes; more than this is not a reply to wait for. */
  static final int MAX_REPLY_BYTES = 64 << 20;

  boolean answered() {
    return body != null;
  }

  static DaemonAnswer ask(CommonOptions common, Config config, boolean local, String request, boolean rootOnly) {
    if (local) {
      return not("--local");
    }
    if (common.config != null) {
      return not("--config names a configuration of this command's own");
    }
    if (!Path.of(common.hostRoot).normalize().equals(Path.of("/"))) {
      return not("--host-root names a host of this command's own");
    }
    if (rootOnly && !effectiveRoot()) {
      return not("only root has the daemon's scan (it shows every user's processes)");
    }
    String fromEnv = System.getenv("SHMGUARD_ADVICE_SOCKET");
    Path socket = fromEnv != null && !fromEnv.isEmpty() ? Path.of(fromEnv) : config.advice().socket();
    try {
      return new DaemonAnswer(AdviceClient.ask(socket, request, TIMEOUT, MAX_REPLY_BYTES), null);
    } catch (IOException e) {
      return not("no daemon answers on " + socket);
    } catch (ProtocolException e) {
      return not("the daemon answered " + e.code() + ": " + e.getMessage());
    }
  }

  private static DaemonAnswer not(String why) {
    return new DaemonAnswer(null, why);
  }

  /** Whether this process runs with uid 0, from /proc/self/status: no native library to load for it. */
  static boolean effectiveRoot() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("Uid:")) {
          String[] ids = line.substring(4).trim().split("\\s+");
          return ids.length > 1 && ids[1].equals("0");
        }
      }
    } catch (IOException e) {
      // unknown: ask nothing only root may ask
    }
    return false;
  }
}
