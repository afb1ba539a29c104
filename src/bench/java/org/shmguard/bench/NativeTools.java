package org.shmguard.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The bench's C helpers (src/bench/c), compiled with gcc into target/bench/bin when the bench
 * starts: the fixture of holder processes, the /proc floor scanner, the reap floor, the sd_notify
 * listener and a wrapper that reports a command's CPU time.
 */
final class NativeTools {
  private final Path bin;

  private NativeTools(Path bin) {
    this.bin = bin;
  }

  static NativeTools build(Path basedir, Path out) throws IOException, InterruptedException {
    Path bin = out.resolve("bin");
    Files.createDirectories(bin);
    for (String tool : List.of("shmfixture", "procfloor", "reapfloor", "notifylisten", "cputime")) {
      Path src = basedir.resolve("src/bench/c").resolve(tool + ".c");
      Process gcc = new ProcessBuilder("gcc", "-O2", "-Wall", "-o", bin.resolve(tool).toString(), src.toString())
          .inheritIO().start();
      if (gcc.waitFor() != 0) {
        throw new IOException("gcc failed on " + src + "; the bench needs gcc (apt-get install gcc)");
      }
    }
    return new NativeTools(bin);
  }

  String fixture() {
    return bin.resolve("shmfixture").toString();
  }

  String floor() {
    return bin.resolve("procfloor").toString();
  }

  String reapFloor() {
    return bin.resolve("reapfloor").toString();
  }

  String cputime() {
    return bin.resolve("cputime").toString();
  }

  String notifyListener() {
    return bin.resolve("notifylisten").toString();
  }
}
