package org.shmguard.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a command to completion and returns what it printed; fails the test on a non-zero status. */
public final class Cmd {
  private Cmd() {}

  public record Result(int status, String out, String err) {}

  public static String run(String... command) {
    Result r = exec(command);
    if (r.status != 0) {
      throw new AssertionError("command failed (" + r.status + "): " + String.join(" ", command) + "\n" + r.err + r.out);
    }
    return r.out;
  }

  public static Result exec(String... command) {
    try {
      Process p = new ProcessBuilder(List.of(command)).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
      byte[] out = p.getInputStream().readAllBytes();
      byte[] err = p.getErrorStream().readAllBytes();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("command timed out: " + String.join(" ", command));
      }
      return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new AssertionError("cannot run " + command[0] + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
