package org.shmguard.testing;

import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A small C program from src/test/resources, built once per test JVM with the C compiler into a
 * directory every user can read (an ordinary user runs some of them). Skips the calling test when
 * there is no compiler or a library it needs is missing.
 *
 * <pre>{@code
 * Path bin = CProgram.build("holders/thread-holder.c", "-pthread");
 * }</pre>
 */
public final class CProgram {
  private static final Map<String, Path> BUILT = new HashMap<>();

  private CProgram() {}

  /** The program built from {@code resource} with {@code flags} after the source. */
  public static synchronized Path build(String resource, String... flags) {
    Path bin = BUILT.get(resource);
    if (bin != null) {
      return bin;
    }
    try {
      Path dir = Files.createDirectories(Sandbox.MOUNTS.resolve("c-" + ProcessHandle.current().pid()));
      for (Path d : List.of(Sandbox.MOUNTS, dir)) {
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      String name = Path.of(resource).getFileName().toString();
      Path src = dir.resolve(name);
      try (InputStream s = CProgram.class.getResourceAsStream("/" + resource)) {
        if (s == null) {
          throw new AssertionError("no test resource " + resource);
        }
        Files.copy(s, src, StandardCopyOption.REPLACE_EXISTING);
      }
      bin = dir.resolve(name.replaceAll("\\.c$", ""));
      List<String> cmd = new ArrayList<>(List.of("cc", "-O1", "-Wall", "-o", bin.toString(), src.toString()));
      cmd.addAll(List.of(flags));
      Process cc;
      try {
        cc = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      } catch (IOException e) {
        assumeThat(false).as("needs a C compiler (cc) to build " + resource + ": " + e.getMessage()).isTrue();
        throw e;
      }
      String said = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!cc.waitFor(120, TimeUnit.SECONDS) || cc.exitValue() != 0) {
        throw new AssertionError("cc " + String.join(" ", cmd) + " failed: " + said);
      }
      BUILT.put(resource, bin);
      return bin;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while building " + resource);
    }
  }

  /** The compiler flags pkg-config gives for {@code library}; skips the test when it is not installed. */
  public static String[] pkgConfig(String library) {
    try {
      Process p = new ProcessBuilder("pkg-config", "--cflags", "--libs", library).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      boolean ok = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
      assumeThat(ok).as("needs " + library + " for the C compiler (pkg-config " + library + "): " + out).isTrue();
      return out.isEmpty() ? new String[0] : out.split("\\s+");
    } catch (IOException e) {
      assumeThat(false).as("needs pkg-config to find " + library + ": " + e.getMessage()).isTrue();
      return new String[0];
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted");
    }
  }
}
