package org.shmguard.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A process in a PID namespace of its own ({@code unshare --pid --fork --mount-proc}) that shares
 * the test's tmpfs, has a chosen pid in its namespace (set through that namespace's
 * {@code ns_last_pid}) and makes one file whose name carries that pid, as a PyTorch worker in a
 * container started with {@code --ipc=host} but its own PID namespace does. It closes the file and
 * stays alive (it holds nothing) until {@link #close}.
 *
 * <pre>{@code
 * try (PidNsCreator c = PidNsCreator.start(shm.path(), 30000, "torch_%d_1_0", "batch 7")) {
 *   c.hostPid();   // its pid in the test's PID namespace, not 30000
 * }
 * }</pre>
 */
public final class PidNsCreator implements AutoCloseable {
  private final Process unshare;
  private final long hostPid;
  private final Path file;

  private PidNsCreator(Process unshare, long hostPid, Path file) {
    this.unshare = unshare;
    this.hostPid = hostPid;
    this.file = file;
  }

  /**
   * @param nsPid the pid the creator has in its own namespace (at least 2)
   * @param nameFormat the file's name with {@code %d} for that pid
   * @param content what it writes into the file
   */
  public static PidNsCreator start(Path dir, int nsPid, String nameFormat, String content) {
    String name = String.format(nameFormat, nsPid);
    // pid 1 (the namespace's init) sets the next pid, then forks the creator, which writes the file
    // by its own $$ and becomes a sleep with the same pid.
    String inner = "printf '%s' \"$2\" > \"$1/" + nameFormat.replace("%d", "$$") + "\"; echo \"$$ ready\"; exec sleep 600";
    String script = "echo " + (nsPid - 1) + " > /proc/sys/kernel/ns_last_pid && sh -c '" + inner.replace("'", "'\\''")
        + "' sh \"$1\" \"$2\"; wait";
    try {
      Process p = new ProcessBuilder("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script, "sh",
          dir.toString(), content).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
      if (line == null || !line.startsWith(nsPid + " ")) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
        throw new IllegalStateException("the creator did not get pid " + nsPid + " in its namespace: " + line);
      }
      long host = p.descendants().filter(h -> innermostPid(h.pid()) == nsPid).mapToLong(ProcessHandle::pid).findFirst()
          .orElseThrow(() -> new IllegalStateException("no process has pid " + nsPid + " in the new namespace"));
      return new PidNsCreator(p, host, dir.resolve(name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The last pid of NSpid in /proc/PID/status: the pid a process has in its own namespace; -1 if gone. */
  private static int innermostPid(long pid) {
    try {
      for (String line : java.nio.file.Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("NSpid:")) {
          String[] f = line.substring(6).trim().split("\\s+");
          return Integer.parseInt(f[f.length - 1]);
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return -1;
  }

  /** Its pid in the test's PID namespace. */
  public long hostPid() {
    return hostPid;
  }

  /** The file it made. */
  public Path file() {
    return file;
  }

  /** Kills it and its namespace's init, and waits until both are gone. */
  @Override
  public void close() {
    unshare.descendants().forEach(ProcessHandle::destroyForcibly);
    unshare.destroyForcibly();
    try {
      unshare.waitFor(20, TimeUnit.SECONDS);
      for (int i = 0; i < 200 && ProcessHandle.of(hostPid).map(ProcessHandle::isAlive).orElse(false); i++) {
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
