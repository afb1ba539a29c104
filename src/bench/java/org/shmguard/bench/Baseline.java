package org.shmguard.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Another shmguard build (a jar given as {@code -Dbench.baselineJar}), kept running in its own
 * warm JVM ({@link BaselineProbe}) so that the bench can time its scan and its reaps in the same
 * rounds as this build's: the cost of a change, measured in one run.
 */
final class Baseline implements AutoCloseable {
  /** One timed command: wall and CPU time, and for a reap the files reaped of those planned. */
  record Run(long nanos, long cpuNanos, long reaped, long candidates) {}

  private final Path jar;
  private final Process process;
  private final OutputStream in;
  private final BufferedReader out;

  private Baseline(Path jar) throws IOException {
    this.jar = jar;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    this.process = new ProcessBuilder(java, "-Xmx512m", "-XX:+UseSerialGC", "-cp", jar + ":" + benchClasses(),
        BaselineProbe.class.getName()).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    this.in = process.getOutputStream();
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.US_ASCII));
  }

  /** The baseline of {@code params}, or null when none was given. */
  static Baseline start(BenchParams params) throws IOException {
    if (params.baselineJar() == null) {
      return null;
    }
    if (!Files.isRegularFile(params.baselineJar())) {
      throw new IOException("bench.baselineJar: no such file: " + params.baselineJar());
    }
    return new Baseline(params.baselineJar());
  }

  Path jar() {
    return jar;
  }

  /** One warm Engine.judge() of the baseline build. */
  Run scan() throws IOException {
    return ask("scan");
  }

  /** The baseline build's Reaper on every leaked file now in the mount (grace 0). */
  Run reap() throws IOException {
    return ask("reap");
  }

  private Run ask(String command) throws IOException {
    in.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
    in.flush();
    String line = out.readLine();
    if (line == null) {
      throw new IOException("the baseline probe (" + jar + ") ended");
    }
    String[] f = line.split(" ");
    if (f.length < 2 || !f[0].matches("\\d+")) {
      throw new IOException("the baseline probe answered \"" + line + "\"");
    }
    return new Run(Long.parseLong(f[0]), Long.parseLong(f[1]), f.length > 2 ? Long.parseLong(f[2]) : 0,
        f.length > 3 ? Long.parseLong(f[3]) : 0);
  }

  private static String benchClasses() throws IOException {
    try {
      return Path.of(BaselineProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IOException("cannot locate the bench's classes", e);
    }
  }

  @Override
  public void close() throws IOException, InterruptedException {
    in.close();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
