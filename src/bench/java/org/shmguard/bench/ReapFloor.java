package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The C program reapfloor kept running on one directory: {@link #make} creates leaked files there
 * (untimed), {@link #unlink} and {@link #lease} remove the files of the last make and return the
 * time the program measured for that alone (wall and CPU).
 */
final class ReapFloor implements AutoCloseable {
  /** One timed removal: its duration, and how many files it removed. */
  record Run(long nanos, long cpuNanos, long done) {}

  private final Process process;
  private final OutputStream in;
  private final BufferedReader out;

  ReapFloor(NativeTools tools, Path dir) throws IOException {
    this.process = new ProcessBuilder(tools.reapFloor(), dir.toString()).redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    this.in = process.getOutputStream();
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII));
  }

  /** Creates {@code n} files nccl-XXXXXX (4 KiB allocated each, closed, held by no one). */
  void make(int n) throws IOException {
    String line = ask("make " + n);
    if (!line.equals("made " + n)) {
      throw new IOException("reapfloor: asked for " + n + " files, answered \"" + line + "\"");
    }
  }

  /** unlinkat of each file of the last make: no check at all. */
  Run unlink() throws IOException {
    return run(ask("unlink"));
  }

  /** The lease dance of each file of the last make, {@code batch} at a time, one wait of {@code settleMicros} per batch. */
  Run lease(int batch, long settleMicros) throws IOException {
    return run(ask("lease " + batch + " " + settleMicros));
  }

  private static Run run(String line) {
    String[] f = line.split(" ");
    return new Run(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]));
  }

  private String ask(String command) throws IOException {
    in.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
    in.flush();
    String line = out.readLine();
    if (line == null) {
      throw new IOException("reapfloor ended");
    }
    return line;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    in.close();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
