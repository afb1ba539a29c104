package org.shmguard.it.holders;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.shmguard.testing.Cmd;
import org.shmguard.testing.Sandbox;

/**
 * A process from src/test/resources/lease/holders.c (built once with cc): a holder no /proc walk
 * can see (an fd in flight over SCM_RIGHTS, a holder that hands its fd over and exits, a file
 * registered in an io_uring, a bind mount of the file in a mount namespace of its own), or a racer
 * that opens files by name. Talks to it by lines; ends it by pid.
 *
 * <pre>{@code
 * try (HiddenHolder h = HiddenHolder.start("scm", seg.toString())) { h.say("recv"); h.readLine(); }
 * }</pre>
 */
final class HiddenHolder implements AutoCloseable {
  private static Path binary;
  private final Process process;
  private final BufferedReader out;
  private final OutputStream in;

  private HiddenHolder(Process process) {
    this.process = process;
    this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    this.in = process.getOutputStream();
  }

  /** Starts {@code holders ARGS...} and waits for its "ready". */
  static HiddenHolder start(String... args) {
    List<String> cmd = new ArrayList<>(List.of(binary().toString()));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      HiddenHolder h = new HiddenHolder(p);
      String line = h.readLine();
      if (line != null && line.startsWith("unavailable ")) {
        h.close();
        org.junit.jupiter.api.Assumptions.abort("this kernel does not allow it: " + line.substring(12));
      }
      if (!"ready".equals(line)) {
        h.close();
        throw new AssertionError("holder did not start: " + cmd + " said " + line);
      }
      return h;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static synchronized Path binary() {
    Sandbox.require();
    if (binary == null) {
      try {
        Path dir = Files.createDirectories(Sandbox.MOUNTS.resolve("lease-holders"));
        Path src = dir.resolve("holders.c");
        try (InputStream s = HiddenHolder.class.getResourceAsStream("/lease/holders.c")) {
          Files.copy(s, src, StandardCopyOption.REPLACE_EXISTING);
        }
        Path bin = dir.resolve("holders");
        Cmd.run("cc", "-O2", "-Wall", "-o", bin.toString(), src.toString());
        binary = bin;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return binary;
  }

  int pid() {
    return (int) process.pid();
  }

  void say(String line) {
    try {
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String readLine() {
    try {
      return out.readLine();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Closes its stdin (every mode then exits) and waits for the exit; kills it by pid if it lingers. */
  @Override
  public void close() {
    try {
      in.close();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(20, TimeUnit.SECONDS);
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
