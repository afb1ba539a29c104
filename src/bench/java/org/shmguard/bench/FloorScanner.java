package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The floor of a holder scan, the C program procfloor kept running: each {@link #pass()} asks it for
 * one pass (read every /proc/PID/maps, list every /proc/PID/fd) and returns the time it measured
 * for the pass itself (wall and CPU), without process start-up.
 */
final class FloorScanner implements AutoCloseable {
  /**
   * One floor pass: its duration and what it read ({@code threadTables}: fd tables of threads other
   * than a leader read; {@code fdinfos}: fdinfo files read; both 0 but in a full pass).
   */
  record Pass(long nanos, long cpuNanos, int processes, long mapsBytes, long fdEntries, long threadTables, long fdinfos) {}

  private final Process process;
  private final OutputStream in;
  private final BufferedReader out;

  FloorScanner(NativeTools tools) throws IOException {
    this.process = new ProcessBuilder(tools.floor()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    this.in = process.getOutputStream();
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII));
  }

  Pass pass() throws IOException {
    return request("\n");
  }

  /**
   * The kernel work of a whole scan of {@code mount} that keeps issue 11's holder rules, parsing only
   * fdinfo's mnt_id: every thread's distinct fd table (kcmp), fdinfo instead of a stat through each
   * fd (see procfloor.c).
   */
  Pass fullPass(String mount) throws IOException {
    return request("full " + mount + "\n");
  }

  /**
   * The kernel work of the exit pass's confirming read (issue 33): every distinct fd table as
   * {@link #fullPass} reads it, and no maps, namespaces, stat or listing.
   */
  Pass fdTablesPass(String mount) throws IOException {
    return request("fds " + mount + "\n");
  }

  /** The kernel work of a whole scan as it was before issue 11: a stat through every fd of each leader. */
  Pass oldFullPass(String mount) throws IOException {
    return request("old " + mount + "\n");
  }

  private Pass request(String ask) throws IOException {
    in.write(ask.getBytes(StandardCharsets.US_ASCII));
    in.flush();
    String line = out.readLine();
    if (line == null) {
      throw new IOException("procfloor ended");
    }
    String[] f = line.split(" ");
    return new Pass(Long.parseLong(f[0]), Long.parseLong(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]),
        Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]));
  }

  @Override
  public void close() throws IOException, InterruptedException {
    in.close();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
