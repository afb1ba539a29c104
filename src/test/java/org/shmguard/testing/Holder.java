package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts and ends real holder processes ({@link HolderProcess}), optionally inside a new PID and
 * mount namespace with its own tmpfs at /dev/shm, as a container would have. Ends them by pid.
 *
 * <pre>{@code
 * try (Holder h = Holder.start("map", seg.toString())) { ... h.pid() ... }
 * }</pre>
 */
public final class Holder implements AutoCloseable {
  private final Process process;
  private final int pid;

  private Holder(Process process, int pid) {
    this.process = process;
    this.pid = pid;
  }

  /** A holder in the sandbox's own namespaces: {@code start("fd", path, "map", other)}. */
  public static Holder start(String... modeAndPaths) {
    return launch(javaCommand(modeAndPaths), false);
  }

  /**
   * A holder in a "container": a new PID and mount namespace whose /dev/shm is a fresh tmpfs of
   * {@code shmOptions}; paths given as /dev/shm/NAME refer to that tmpfs.
   */
  public static Holder startInContainer(String shmOptions, String... modeAndPaths) {
    List<String> cmd = new ArrayList<>(List.of("unshare", "--pid", "--fork", "--mount", "--propagation", "private",
        "--kill-child", "/bin/sh", "-c",
        "mount -t tmpfs -o " + shmOptions + " container-shm /dev/shm && exec \"$@\"", "sh"));
    cmd.addAll(javaCommand(modeAndPaths));
    return launch(cmd, true);
  }

  private static List<String> javaCommand(String... modeAndPaths) {
    // -XX:-UsePerfData: a holder started as pid 1 of its own PID namespace would otherwise lock
    // /tmp/hsperfdata_root/1, which every other such holder (and sandbox) wants too.
    List<String> cmd = new ArrayList<>(List.of(Sandbox.javaBinary(), "-Xshare:auto", "-XX:-UsePerfData", "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1", "-Xmx32m", "-cp", System.getProperty("java.class.path"), HolderProcess.class.getName()));
    cmd.addAll(List.of(modeAndPaths));
    return cmd;
  }

  private static Holder launch(List<String> cmd, boolean inContainer) {
    Sandbox.require();
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      if (!"ready".equals(line)) {
        p.destroyForcibly();
        throw new AssertionError("holder did not start: " + cmd + " said " + line);
      }
      int pid = (int) p.pid();
      if (inContainer) {
        // unshare forks once; its child execs sh, which execs the holder JVM in place.
        pid = p.toHandle().children().mapToInt(h -> (int) h.pid()).findFirst()
            .orElseThrow(() -> new AssertionError("no holder process under unshare"));
      }
      return new Holder(p, pid);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The holder's pid as the sandbox's /proc shows it. */
  public int pid() {
    return pid;
  }

  /** SIGKILL, as the OOM killer would, and wait for the process to be gone. */
  public void kill() {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
      ProcessHandle.of(pid).ifPresent(h -> h.onExit().orTimeout(10, TimeUnit.SECONDS).join());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // gone already
    }
  }

  @Override
  public void close() {
    kill();
  }
}
